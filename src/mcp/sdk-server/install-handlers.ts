import { randomUUID } from "node:crypto";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ServerNotification, ServerRequest, Tool } from "@modelcontextprotocol/sdk/types.js";
import { TaskError, toRpcError } from "../../core/errors.js";
import type { TaskEngine } from "../../runtime/task-engine.js";
import type { SessionContext } from "../era.js";
import { toolsCall } from "../handlers/tools-call.js";
import { callerOf } from "../owner.js";
import { looseRequest, type LooseParams } from "../request-schemas.js";
import { SESSION_ERA } from "../eras.js";
import { baseSetRequestHandler } from "../sdk-shapes.js";
import { LogThreshold } from "../logging/log-level.js";
import type { TaskServerConfig } from "../task-server-config.js";
import type { RegisteredTool } from "../tool-definition.js";
import { whileCreating } from "./creating-request.js";
import { fallbackTaskTools, isFallbackTaskTool, servesFallback } from "./fallback-tools.js";
import { hasSdkTaskStore, registeredToolsOf, requestHandlerOf } from "./sdk-internals.js";

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;
type Request = { method: string; params?: LooseParams };

/** What one McpServer's task handlers share with the others of the same engine. */
export interface TaskHost {
  engine: TaskEngine;
  config: TaskServerConfig;
  /** The task-capable tools, as the engine's runner finds them. */
  tools: ReadonlyMap<string, RegisteredTool>;
  /** Starts the engine if need be (idempotent); resolves once it has recovered interrupted tasks. */
  ready(): Promise<void>;
}

/**
 * Gives one McpServer our tasks in the session era (an McpServer's sessions begin with
 * `initialize`): wraps its tools/list (each marked tool listed with its task support, T-TOOL-1)
 * and tools/call (a task-augmented call of a marked tool becomes a task, T-NEW-2), installs the
 * era's task methods and declares its task capabilities (T-CAP-1/2). A client that declared no task support gets the
 * fallback for hosts without tasks, as from a TaskServer: plain calls of marked tools run as
 * tasks answered inline or in the background, and the `task_*` tools. Resources, prompts,
 * completions, logging and every other call stay the SDK's. Returns what stops the session's notifications, which also
 * stop when the server closes (then `onClosed` is called).
 */
export function installTaskHandlers(mcpServer: McpServer, host: TaskHost, marked: ReadonlySet<string>, onClosed: () => void): () => void {
  const server = mcpServer.server;
  if (server.transport !== undefined) throw new Error("withTasks: give the McpServer its tasks before connecting it to a transport");
  if (hasSdkTaskStore(server)) {
    throw new Error("withTasks: this McpServer was created with the SDK's own taskStore; leave it out so one engine answers tasks/*");
  }
  const registered = registeredToolsOf(mcpServer);
  for (const name of marked) {
    const tool = registered[name];
    if (!tool) throw new Error(`withTasks: no tool ${name} is registered on this McpServer (register it first)`);
    if ("createTask" in tool.handler) {
      throw new Error(`withTasks: tool ${name} was registered with experimental.tasks.registerToolTask; register it with registerTool`);
    }
  }
  // Present once any tool is registered: McpServer installs both with its first tool.
  const sdkList = requestHandlerOf(server, "tools/list");
  const sdkCall = requestHandlerOf(server, "tools/call");
  if (!sdkList || !sdkCall) throw new Error("withTasks: the McpServer has no tool handlers (register its tools first)");

  const { engine, config } = host;
  const era = SESSION_ERA;
  server.registerCapabilities(era.wire.serverCapabilities());
  const connectionId = randomUUID();
  // The SDK's McpServer keeps its own logging level (its logging/setLevel); ours admits all.
  const session: SessionContext = { server, engine, tools: host.tools, config, era, connectionId, logThreshold: new LogThreshold() };
  // The McpServer's transport is the application's: it tells handlers no network peer.
  const callerFor = (extra: Extra) => callerOf(extra.authInfo, config.bind, connectionId, undefined);
  // Protocol's own setRequestHandler: Server's override of it would check a task-augmented
  // tools/call's answer is a CreateTaskResult, and a call of an unmarked tool is answered plainly.
  const setHandler = baseSetRequestHandler(server) as (
    schema: unknown,
    handler: (request: Request, extra: Extra) => Promise<unknown>,
  ) => void;
  const install = (method: string, handler: (request: Request, extra: Extra) => Promise<unknown>): void =>
    setHandler.call(server, looseRequest(method), handler);

  install("tools/list", async (request, extra) => {
    const listed = (await sdkList(request, extra)) as { tools: Tool[] };
    const tools = listed.tools.map((tool) => {
      const task = marked.has(tool.name) ? host.tools.get(tool.name) : undefined;
      return task ? era.wire.listedWithTaskSupport(tool, task.definition.taskSupport ?? "forbidden") : tool;
    });
    // docs/hosts/README.md: the task operations as tools, for a client that declared no tasks.
    if (servesFallback(mcpServer, config)) tools.push(...fallbackTaskTools(mcpServer, host.tools));
    return { ...listed, tools };
  });

  const ours = (request: Request, extra: Extra): Promise<unknown> =>
    answered(engine, "tools/call", () =>
      whileCreating({ authInfo: extra.authInfo, sessionId: extra.sessionId, server }, () =>
        toolsCall(session, request.params, { requestId: extra.requestId, signal: extra.signal, caller: callerFor(extra) }),
      ),
    );

  install("tools/call", async (request, extra) => {
    const params = request.params;
    const name = params?.["name"];
    const tool = typeof name === "string" && marked.has(name) ? host.tools.get(name) : undefined;
    const enabled = typeof name === "string" && registeredToolsOf(mcpServer)[name]?.enabled === true;
    // A plain call from a client without task support: toolsCall runs a marked tool in the fallback
    // (answered within backgroundAfterMs, else in the background) and serves our task_* tools.
    const asTask = era.wire.taskParamsOf(params) !== undefined;
    const fallback = !asTask && servesFallback(mcpServer, config);
    if (!tool || !enabled) {
      if (fallback && isFallbackTaskTool(name, mcpServer, host.tools)) {
        await host.ready();
        return ours(request, extra);
      }
      // T-NEW-4: a tool that is not task-capable runs as the SDK runs it, its task metadata ignored.
      return sdkCall({ ...request, params: era.wire.withoutTaskParams(params) }, extra);
    }
    if (!asTask && tool.definition.taskSupport === "optional" && !fallback) return sdkCall(request, extra);
    await host.ready();
    return ours(request, extra);
  });

  for (const [method, { session: handler }] of Object.entries(era.methods)) {
    if (!handler) continue;
    install(method, async (request, extra) => {
      await host.ready();
      return answered(engine, method, () =>
        handler(session, request.params, {
          requestId: extra.requestId,
          signal: extra.signal,
          abandoned: extra.signal,
          caller: callerFor(extra),
        }),
      );
    });
  }

  const detach = era.attachSession(session, { standaloneStream: true });
  const previousOnClose = server.onclose;
  server.onclose = () => {
    detach();
    onClosed();
    previousOnClose?.();
  };
  return detach;
}

/** Our handlers' errors as the errors table (docs/errors.md) says: a JSON-RPC error as thrown, anything else -32603 with details only in the log (T-ERR-4). */
async function answered<T>(engine: TaskEngine, method: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    const { body, known } = toRpcError(error);
    if (!known) engine.logger.error({ err: error, method }, "request handler failed");
    throw TaskError.protocol(body.code, body.message, body.data);
  }
}
