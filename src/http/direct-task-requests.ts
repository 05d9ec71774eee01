import { toRpcError } from "../core/errors.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { tasksCancel } from "../mcp/handlers/tasks-cancel.js";
import { tasksGet } from "../mcp/handlers/tasks-get.js";
import { tasksList } from "../mcp/handlers/tasks-list.js";
import { callerOf } from "../mcp/owner.js";
import { currentRequestPeer } from "../mcp/request-peer.js";
import type { LooseParams } from "../mcp/request-schemas.js";
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import type { TaskServer } from "../mcp/task-server.js";

/**
 * Methods answered as plain JSON on Streamable HTTP: tasks/get|list|cancel (T-GET-4: the client
 * asked to poll, not to stream) and a task-augmented tools/call, whose CreateTaskResult comes
 * back at once (T-NEW-2) — the task's progress and notifications travel on other streams.
 */
export const DIRECT_METHODS = new Set(["tasks/get", "tasks/list", "tasks/cancel", "tools/call"]);

interface JsonRpcRequest {
  jsonrpc: "2.0";
  id: string | number;
  method: string;
  params?: Record<string, unknown>;
}

/** A single JSON-RPC request for one of {@link DIRECT_METHODS}, or null. */
export function asDirectRequest(body: unknown): JsonRpcRequest | null {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return null;
  const message = body as Record<string, unknown>;
  if (message["jsonrpc"] !== "2.0" || typeof message["method"] !== "string" || !DIRECT_METHODS.has(message["method"])) return null;
  const id = message["id"];
  if (typeof id !== "string" && typeof id !== "number") return null;
  const params = message["params"];
  if (params !== undefined && (typeof params !== "object" || params === null || Array.isArray(params))) return null;
  // A plain tools/call runs the tool and may stream (progress, elicitation): the SDK path serves it.
  if (message["method"] === "tools/call" && (params as Record<string, unknown> | undefined)?.["task"] === undefined) return null;
  return message as unknown as JsonRpcRequest;
}

/** The session a direct request belongs to. */
export interface DirectSession {
  id: string;
  clientCapabilities: ClientCapabilities | undefined;
}

/** Answers a direct request: the JSON-RPC response object (result or error). */
export async function answerDirect(
  app: TaskServer,
  request: JsonRpcRequest,
  auth: AuthInfo | undefined,
  session: DirectSession,
  requestId?: string,
): Promise<object> {
  const engine = app.engine;
  const caller = callerOf(auth, app.config.bind, session.id, currentRequestPeer());
  const params = request.params as LooseParams;
  try {
    let result: object;
    if (request.method === "tasks/get") result = await tasksGet(engine, params, caller);
    else if (request.method === "tasks/list") result = await tasksList(engine, params, caller);
    else if (request.method === "tasks/cancel") result = await tasksCancel(engine, params, caller);
    else result = await app.createTaskFromCall(params, { caller, sessionId: session.id, capabilities: session.clientCapabilities });
    return { jsonrpc: "2.0", id: request.id, result };
  } catch (error) {
    const { body, known } = toRpcError(error);
    if (!known) {
      const taskId = typeof params?.["taskId"] === "string" ? params["taskId"] : undefined;
      engine.logger.error({ err: error, method: request.method, requestId, taskId }, "direct task request failed");
    }
    return { jsonrpc: "2.0", id: request.id, error: body };
  }
}
