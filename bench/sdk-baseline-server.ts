/**
 * Baseline for `npm run bench`: the same `sleep {ms}` tool as a task, written with the official
 * SDK's own experimental tasks (McpServer + `experimental.tasks.registerToolTask`, the SDK's
 * InMemoryTaskStore and InMemoryTaskMessageQueue), served over Streamable HTTP with sessions on a
 * plain node:http server. Written the way the SDK's documentation and examples suggest, with no
 * tuning beyond the poll interval the bench passes in.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

export interface SdkBaselineOptions {
  /** pollInterval stored in every task; the SDK's tasks/result handler sleeps this long between checks. Default 1000 (the SDK's default). */
  pollIntervalMs?: number;
  /** Called the moment a sleep's work ends (before its result is stored), with the task id. */
  onWorkDone?: (taskId: string) => void;
}

export interface SdkBaselineHandle {
  url: string;
  /** The process-wide task store (the bench seeds it directly for the tasks/list walk). */
  taskStore: InMemoryTaskStore;
  close(): Promise<void>;
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch (error) {
        reject(error);
      }
    });
    req.on("error", reject);
  });
}

function rpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

/** Starts the SDK baseline on 127.0.0.1 (port 0). */
export async function startSdkBaseline(options: SdkBaselineOptions = {}): Promise<SdkBaselineHandle> {
  const pollInterval = options.pollIntervalMs ?? 1000;
  const onWorkDone = options.onWorkDone ?? (() => {});
  // One store for the process, as in the SDK's examples; it binds each task to its session.
  const taskStore = new InMemoryTaskStore();
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const servers = new Set<McpServer>();

  const newMcpServer = (): McpServer => {
    const server = new McpServer(
      { name: "sdk-baseline", version: "1.0.0" },
      {
        capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
        taskStore,
        taskMessageQueue: new InMemoryTaskMessageQueue(),
      },
    );
    server.experimental.tasks.registerToolTask(
      "sleep",
      {
        description: "Waits ms milliseconds.",
        inputSchema: { ms: z.number().int().min(0).max(86_400_000) },
        execution: { taskSupport: "optional" },
      },
      {
        async createTask({ ms }, extra) {
          const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl ?? null, pollInterval });
          // The work runs after the CreateTaskResult is returned; its end is stored as the result.
          setTimeout(() => {
            onWorkDone(task.taskId);
            extra.taskStore
              .storeTaskResult(task.taskId, "completed", { content: [{ type: "text", text: `slept ${ms} ms` }] })
              .catch(() => {});
          }, ms);
          return { task };
        },
        async getTask(_args, extra) {
          return extra.taskStore.getTask(extra.taskId);
        },
        async getTaskResult(_args, extra) {
          return (await extra.taskStore.getTaskResult(extra.taskId)) as never;
        },
      },
    );
    return server;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const header = req.headers["mcp-session-id"];
    const sessionId = typeof header === "string" ? header : undefined;
    if (req.method === "POST") {
      const body = await readJson(req).catch(() => undefined);
      if (body === undefined) return rpcError(res, 400, -32700, "Parse error");
      if (sessionId === undefined) {
        if (!isInitializeRequest(body)) return rpcError(res, 400, -32000, "Bad Request: initialize first");
        const server = newMcpServer();
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void transports.set(id, transport),
        });
        transport.onclose = () => {
          if (transport.sessionId) transports.delete(transport.sessionId);
          servers.delete(server);
        };
        servers.add(server);
        await server.connect(transport);
        await transport.handleRequest(req, res, body);
        return;
      }
      const transport = transports.get(sessionId);
      if (!transport) return rpcError(res, 404, -32001, "Session not found");
      await transport.handleRequest(req, res, body);
      return;
    }
    if (req.method === "GET" || req.method === "DELETE") {
      const transport = sessionId === undefined ? undefined : transports.get(sessionId);
      if (!transport) return rpcError(res, 404, -32001, "Session not found");
      await transport.handleRequest(req, res);
      return;
    }
    res.writeHead(405).end();
  };

  const http = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) rpcError(res, 500, -32603, "Internal error");
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    taskStore,
    async close() {
      for (const server of [...servers]) await server.close().catch(() => {});
      taskStore.cleanup();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
