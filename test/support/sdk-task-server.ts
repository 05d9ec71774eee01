/**
 * A receiver written with the official SDK's own experimental tasks (McpServer +
 * `experimental.tasks.registerToolTask`, its InMemoryTaskStore and InMemoryTaskMessageQueue) over
 * Streamable HTTP with sessions: the other implementation our requestor side must work with.
 * Like the SDK's store, it binds every task to the MCP session that created it.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ElicitResultSchema, isInitializeRequest, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

export interface SdkTaskServer {
  url: string;
  /** Live sessions (the SDK's tasks are only reachable from these). */
  sessions: Map<string, StreamableHTTPServerTransport>;
  close(): Promise<void>;
}

const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });

function buildServer(store: InMemoryTaskStore, pollInterval: number): McpServer {
  const server = new McpServer(
    { name: "sdk-tasks", version: "1.0.0" },
    {
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore: store,
      taskMessageQueue: new InMemoryTaskMessageQueue(),
    },
  );
  const getters = {
    getTask: async (_args: unknown, extra: { taskId: string; taskStore: { getTask(id: string): Promise<unknown> } }) =>
      extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (_args: unknown, extra: { taskId: string; taskStore: { getTaskResult(id: string): Promise<unknown> } }) =>
      extra.taskStore.getTaskResult(extra.taskId),
  };
  server.experimental.tasks.registerToolTask(
    "sleep",
    { inputSchema: { ms: z.number().int().min(0) }, execution: { taskSupport: "optional" } },
    {
      async createTask({ ms }, extra) {
        const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl ?? 60_000, pollInterval });
        setTimeout(() => void extra.taskStore.storeTaskResult(task.taskId, "completed", text(`slept ${ms} ms`)).catch(() => {}), ms);
        return { task };
      },
      getTask: getters.getTask as never,
      getTaskResult: getters.getTaskResult as never,
    },
  );
  server.experimental.tasks.registerToolTask(
    "fail",
    { inputSchema: { message: z.string() }, execution: { taskSupport: "optional" } },
    {
      async createTask({ message }, extra) {
        const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval });
        setTimeout(
          () => void extra.taskStore.storeTaskResult(task.taskId, "failed", { ...text(message), isError: true }).catch(() => {}),
          10,
        );
        return { task };
      },
      getTask: getters.getTask as never,
      getTaskResult: getters.getTaskResult as never,
    },
  );
  server.experimental.tasks.registerToolTask(
    "ask",
    { inputSchema: { question: z.string() }, execution: { taskSupport: "required" } },
    {
      async createTask({ question }, extra) {
        const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval });
        // The SDK's way: a request with relatedTask is queued for the task and delivered on the
        // requestor's tasks/result stream; the task shows input_required meanwhile.
        void (async () => {
          const answer = await extra.sendRequest(
            {
              method: "elicitation/create",
              params: {
                mode: "form",
                message: question,
                requestedSchema: { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] },
              },
            },
            ElicitResultSchema,
            // The SDK's types leave relatedTask out of a task handler's options; its runtime honours it.
            { relatedTask: { taskId: task.taskId }, timeout: 60_000 } as never,
          );
          await extra.taskStore.updateTaskStatus(task.taskId, "working");
          const reply = answer.action === "accept" ? `answer: ${String(answer.content?.["answer"])}` : answer.action;
          await extra.taskStore.storeTaskResult(task.taskId, "completed", text(reply));
        })().catch(() => {});
        return { task };
      },
      getTask: getters.getTask as never,
      getTaskResult: getters.getTaskResult as never,
    },
  );
  return server;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

function reject(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } }));
}

/** Starts the SDK-based receiver on 127.0.0.1 (free port). */
export async function startSdkTaskServer(options: { pollIntervalMs?: number } = {}): Promise<SdkTaskServer> {
  const store = new InMemoryTaskStore();
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const servers = new Set<McpServer>();
  const http = createServer((req, res) => {
    void (async () => {
      const header = req.headers["mcp-session-id"];
      const sessionId = typeof header === "string" ? header : undefined;
      if (req.method === "POST" && sessionId === undefined) {
        const body = await readJson(req).catch(() => undefined);
        if (!isInitializeRequest(body)) return reject(res, 400, -32000, "Bad Request: initialize first");
        const server = buildServer(store, options.pollIntervalMs ?? 100);
        const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void sessions.set(id, transport),
        });
        transport.onclose = () => {
          if (transport.sessionId) sessions.delete(transport.sessionId);
          servers.delete(server);
        };
        servers.add(server);
        await server.connect(transport);
        return transport.handleRequest(req, res, body);
      }
      const transport = sessionId === undefined ? undefined : sessions.get(sessionId);
      if (!transport) return reject(res, 404, -32001, "Session not found");
      if (req.method === "POST") return transport.handleRequest(req, res, await readJson(req));
      return transport.handleRequest(req, res);
    })().catch(() => {
      if (!res.headersSent) reject(res, 500, -32603, "Internal error");
      else res.end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    sessions,
    async close() {
      for (const server of [...servers]) await server.close().catch(() => {});
      store.cleanup();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
