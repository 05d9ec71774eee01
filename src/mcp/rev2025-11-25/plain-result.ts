import type { PlainMethod } from "../era.js";
import { NEEDS_STREAM } from "../era.js";
import type { TaskRecord } from "../../core/task.js";
import { requireTaskId, withOperation } from "../param-checks.js";
import { hasUndeliveredInputs } from "./input-delivery.js";
import { resultOf } from "./tasks-result.js";

/**
 * `tasks/result` answered as one plain JSON response, without an MCP server or a stream for the
 * request. Most tasks never ask their requestor anything, and in a shared (cluster) session the
 * task's notifications travel on the session's GET stream, so this request's own stream would
 * carry nothing but the answer: building the SDK's per-request server and SSE stream for it was
 * a third of a front node's CPU. When the task has a question waiting (T-INPUT-3) — before or
 * while blocking — or belongs to another session, nothing has been written yet, and the request
 * goes to the streaming handler (tasks-result.ts), which delivers it.
 *
 * Same answers as the streaming handler: the stored result with related-task `_meta` (T-RES-5),
 * the replayed error (T-RES-4), -32800 for a cancelled task, and "Failed to retrieve task result:
 * Task not found" for an unknown or foreign id (T-SEC-3).
 */
export const plainTasksResult: PlainMethod = ({ engine }, params, request) => {
  // On a local session an open tasks/result carries the task's notifications on its own stream.
  if (!request.sessionStreamCarriesOwnTasks) return Promise.resolve(NEEDS_STREAM);
  const { caller, sessionId, abandoned } = request;
  const failed = (error: unknown): typeof NEEDS_STREAM => {
    if (error === NEEDS_STREAM) {
      // The streaming handler counts the request again: one request, one operation.
      engine.handedOn(requireTaskId(params), caller);
      return NEEDS_STREAM;
    }
    throw withOperation("Failed to retrieve task result", error);
  };
  let waited: Promise<TaskRecord>;
  try {
    const taskId = requireTaskId(params);
    waited = engine.awaitOutcome(taskId, caller, abandoned, async ({ task, inputsMayHaveChanged }) => {
      // Another session's task (a requestor that reconnected) sends its notifications on this
      // request's stream (T-NOTE-1, T-PROG-1); the creating session gets them on its GET stream.
      if (task.origin.sessionId !== sessionId) throw NEEDS_STREAM;
      if (inputsMayHaveChanged && (await hasUndeliveredInputs(engine, task, caller))) throw NEEDS_STREAM;
    });
  } catch (error) {
    return Promise.resolve().then(() => failed(error));
  }
  // Continued, not awaited: no frame of this function is kept while the request waits. One step:
  // resultOf's errors are none that `failed` would change.
  return waited.then(resultOf, failed);
};
