import type { IncomingMessage, ServerResponse } from "node:http";
import type { Caller } from "../core/caller.js";
import { toRpcError } from "../core/errors.js";
import type { TaskRecord } from "../core/task.js";
import { resultOf } from "../mcp/handlers/tasks-result.js";
import { requireTaskId, withOperation } from "../mcp/param-checks.js";
import type { LooseParams } from "../mcp/request-schemas.js";
import type { TaskServer } from "../mcp/task-server.js";
import { StreamRequiredError } from "../runtime/task-engine.js";

interface ResultRequest {
  jsonrpc: "2.0";
  id: string | number;
  method: "tasks/result";
  params?: Record<string, unknown>;
}

/** A single well-formed JSON-RPC `tasks/result` request, or null. */
export function asResultRequest(message: unknown): ResultRequest | null {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return null;
  const m = message as Record<string, unknown>;
  if (m["jsonrpc"] !== "2.0" || m["method"] !== "tasks/result") return null;
  const id = m["id"];
  if (typeof id !== "string" && typeof id !== "number") return null;
  const params = m["params"];
  if (params !== undefined && (typeof params !== "object" || params === null || Array.isArray(params))) return null;
  return m as unknown as ResultRequest;
}

/** What answering a `tasks/result` without a stream came to. */
export type DirectResultOutcome = "answered" | "abandoned" | "needs-stream";

/**
 * `tasks/result` answered as one plain JSON response, without an MCP server or transport for the
 * request. Most tasks never ask their requestor anything, and in a shared (cluster) session the
 * task's notifications travel on the session's GET stream, so this request's own stream would
 * carry nothing but the answer: building the SDK's per-request server and SSE stream for it was
 * a third of a front node's CPU. When the task has an input request waiting (T-INPUT-3) — before
 * or while blocking — or belongs to another session, nothing has been written yet, and the caller
 * hands the request to the streaming path, which delivers it; "needs-stream" says so.
 *
 * Same answers as the streaming handler (src/mcp/handlers/tasks-result.ts): the stored result with
 * related-task `_meta` (T-RES-5), the replayed error (T-RES-4), -32800 for a cancelled task, and
 * "Failed to retrieve task result: Task not found" for an unknown or foreign id (T-SEC-3).
 */
export async function answerResultDirect(
  app: TaskServer,
  request: ResultRequest,
  caller: Caller,
  sessionId: string,
  req: IncomingMessage,
  res: ServerResponse,
  headers: Record<string, string>,
): Promise<DirectResultOutcome> {
  const abandoned = new AbortController();
  // The requestor hung up while we waited: stop waiting (its task goes on regardless).
  const onClose = (): void => abandoned.abort("the requestor closed the connection");
  res.once("close", onClose);
  let body: object;
  try {
    const taskId = requireTaskId(request.params as LooseParams);
    // Another session's task (a requestor that reconnected) sends its notifications on this
    // request's stream (T-NOTE-1, T-PROG-1); the creating session gets them on its GET stream.
    const plain = { needsStream: (task: TaskRecord) => task.origin.sessionId !== sessionId };
    const task = await app.engine.awaitResult(taskId, caller, abandoned.signal, plain);
    body = { jsonrpc: "2.0", id: request.id, result: resultOf(task) };
  } catch (error) {
    if (error instanceof StreamRequiredError) return "needs-stream";
    if (abandoned.signal.aborted) return "abandoned";
    const { body: rpcError, known } = toRpcError(withOperation("Failed to retrieve task result", error));
    if (!known) {
      app.engine.logger.error({ err: error, method: "tasks/result", requestId: req.headers["x-request-id"] }, "tasks/result failed");
    }
    body = { jsonrpc: "2.0", id: request.id, error: rpcError };
  } finally {
    res.off("close", onClose);
  }
  res.writeHead(200, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
  return "answered";
}
