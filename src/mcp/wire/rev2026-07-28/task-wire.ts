import { RpcCode } from "../../../core/errors.js";
import type { InputRequest, TaskRecord } from "../../../core/task.js";
import { META, OWN_META, RESULT_TYPE } from "./wire.js";

/** The Task fields (X-TASK-1): `ttlMs` always present (null = unlimited), no `ttl`/`pollInterval` (X-LEG-6, X-CONF-3). */
function taskFields(task: TaskRecord, status: string): Record<string, unknown> {
  return {
    taskId: task.id,
    status,
    ...(task.statusMessage !== null && { statusMessage: task.statusMessage }),
    createdAt: new Date(task.createdAt).toISOString(),
    lastUpdatedAt: new Date(task.updatedAt).toISOString(),
    ttlMs: task.ttlMs,
    ...(task.pollIntervalMs !== null && { pollIntervalMs: task.pollIntervalMs }),
  };
}

/**
 * The status this era shows. The engine keeps 2025-11-25's reading of a tool result with
 * `isError: true` (T-LIFE-4: `failed`, the result kept as the outcome); here that is `completed`
 * with the result (X-TASK-5, X-GET-8), `failed` being only for JSON-RPC errors (X-TASK-6). A task
 * still `input_required` with nothing left unanswered is resuming: `working` (X-UPD-10), so an
 * `input_required` answer always lists what it waits for (X-GET-3).
 */
function shownStatus(task: TaskRecord, pending: readonly InputRequest[]): string {
  if (task.status === "input_required" && pending.length === 0) return "working";
  return statusOf(task);
}

function statusOf(task: TaskRecord): string {
  return task.status === "failed" && task.outcome?.kind === "result" ? "completed" : task.status;
}

/** X-NEW-1, X-RT-2, X-CONF-5: flat, `resultType: "task"`, no result/error/inputRequests/requestState. */
export function createTaskResult(task: TaskRecord): Record<string, unknown> {
  return { resultType: RESULT_TYPE.task, ...taskFields(task, statusOf(task)) };
}

/**
 * `tasks/get`'s DetailedTask (X-TASK-8, X-GET-1..8): `resultType: "complete"` (X-DIS-2), and the
 * fields of its status — `inputRequests` keyed by the engine's input ids (unique over the task's
 * life, X-UPD-3), `result` or `error` inline (X-GET-10: there is no `tasks/result`).
 */
export function detailedTask(task: TaskRecord, pending: readonly InputRequest[]): Record<string, unknown> {
  const status = shownStatus(task, pending);
  const fields: Record<string, unknown> = { resultType: RESULT_TYPE.complete, ...taskFields(task, status) };
  if (status === "input_required") fields["inputRequests"] = inputRequestsOf(pending);
  // Where the task's own progress reports got to (OWN_META: the extension has no field for it).
  if (task.progress !== null && !isTerminalShown(status)) fields["_meta"] = { [OWN_META.progress]: { ...task.progress } };
  if (status === "completed") fields["result"] = inlinedResult(task.outcome?.kind === "result" ? task.outcome.value : {});
  if (status === "failed") {
    // X-GET-7: MUST carry the JSON-RPC error; a failed task always has one (failInternally writes -32603).
    fields["error"] = task.outcome?.kind === "error" ? task.outcome.error : { code: RpcCode.InternalError, message: "Internal error" };
  }
  return fields;
}

function isTerminalShown(status: string): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}

/** X-UPD-1: key → `{method, params}` (MRTR InputRequests); the 2025-only `task` augmentation left out. */
function inputRequestsOf(pending: readonly InputRequest[]): Record<string, unknown> {
  const requests: Record<string, unknown> = {};
  for (const input of pending) {
    const params = typeof input.params === "object" && input.params !== null ? { ...(input.params as Record<string, unknown>) } : {};
    delete params["task"];
    requests[input.id] = { method: input.method, params };
  }
  return requests;
}

/**
 * X-GET-8, X-CAP-9: the inlined result is what the call would have returned inline, so it says
 * `resultType: "complete"` (the official requestor rejects a task result without it); X-CONF-4: it
 * carries no 2025-11-25 related-task `_meta`.
 */
function inlinedResult(value: unknown): Record<string, unknown> {
  const result = completeResult(typeof value === "object" && value !== null ? value : {});
  const meta = result["_meta"];
  if (typeof meta === "object" && meta !== null && Object.hasOwn(meta, META.relatedTask)) {
    const rest = { ...(meta as Record<string, unknown>) };
    delete rest[META.relatedTask];
    if (Object.keys(rest).length > 0) result["_meta"] = rest;
    else delete result["_meta"];
  }
  return result;
}

/** X-CAP-9: every result says its type; a CallToolResult answered inline is "complete". */
export function completeResult(value: object): Record<string, unknown> {
  return { ...(value as Record<string, unknown>), resultType: RESULT_TYPE.complete };
}
