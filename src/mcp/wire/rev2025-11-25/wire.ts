import type { TaskRecord } from "../../../core/task.js";
import type { TaskEvent } from "../../../events/task-event.js";

/**
 * Wire shapes of protocol revision 2025-11-25. Only this folder knows them; the successor
 * revision (extension io.modelcontextprotocol/tasks) will get its own codec over the same engine.
 */
export const RELATED_TASK_META_KEY = "io.modelcontextprotocol/related-task";
export const MODEL_IMMEDIATE_RESPONSE_META_KEY = "io.modelcontextprotocol/model-immediate-response";

/** The wire `Task` (T-TYPE-1). */
export interface WireTask {
  taskId: string;
  status: TaskRecord["status"];
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttl: number | null;
  pollInterval?: number;
}

/** T-TTL-1/2/4: ISO 8601 times and the actual ttl (null when unlimited) in every task response. */
export function toWireTask(
  task: Pick<TaskRecord, "id" | "status" | "statusMessage" | "createdAt" | "updatedAt" | "ttlMs" | "pollIntervalMs">,
): WireTask {
  return {
    taskId: task.id,
    status: task.status,
    ...(task.statusMessage !== null && { statusMessage: task.statusMessage }),
    createdAt: new Date(task.createdAt).toISOString(),
    lastUpdatedAt: new Date(task.updatedAt).toISOString(),
    ttl: task.ttlMs,
    ...(task.pollIntervalMs !== null && { pollInterval: task.pollIntervalMs }),
  };
}

/** The wire Task described by a status event (what a `notifications/tasks/status` carries). */
export function wireTaskOf(event: Extract<TaskEvent, { type: "status" }>): WireTask {
  return toWireTask({ ...event, id: event.taskId });
}

/** T-META-1: `_meta` with the related-task key, merged into existing `_meta`. */
export function withRelatedTask<T extends object>(value: T, taskId: string): T & { _meta: Record<string, unknown> } {
  const existing = (value as { _meta?: unknown })._meta;
  const meta = typeof existing === "object" && existing !== null ? (existing as Record<string, unknown>) : {};
  return { ...value, _meta: { ...meta, [RELATED_TASK_META_KEY]: { taskId } } };
}

// ---- requestor side: reading what a receiver sent ------------------------------------------

/** Request types a party may declare under `capabilities.tasks.requests` (T-CAP-2). */
export type TaskAugmentableMethod = "tools/call" | "sampling/createMessage" | "elicitation/create";

/**
 * T-CAP-3 / T-CAP-4: whether `capabilities` (the receiver's, as declared at initialization)
 * lists `method` under `tasks.requests`. The list is exhaustive: anything not there is "no".
 */
export function declaresTaskSupport(capabilities: unknown, method: string): boolean {
  const requests = pick(pick(capabilities, "tasks"), "requests");
  const [group, verb] = method.split("/");
  if (group === undefined || verb === undefined) return false;
  const entry = pick(pick(requests, group), verb);
  return typeof entry === "object" && entry !== null;
}

/** Whether the receiver declared `tasks.list` / `tasks.cancel` (T-CAP-5). */
export function declaresTaskOperation(capabilities: unknown, operation: "list" | "cancel"): boolean {
  const entry = pick(pick(capabilities, "tasks"), operation);
  return typeof entry === "object" && entry !== null;
}

/** A wire `Task` received from a peer (T-TYPE-1), or null when the value is not one. */
export function readWireTask(value: unknown): WireTask | null {
  if (typeof value !== "object" || value === null) return null;
  const v = value as Record<string, unknown>;
  const statuses = ["working", "input_required", "completed", "failed", "cancelled"];
  if (typeof v["taskId"] !== "string" || typeof v["status"] !== "string" || !statuses.includes(v["status"])) return null;
  if (typeof v["createdAt"] !== "string" || typeof v["lastUpdatedAt"] !== "string") return null;
  if (v["ttl"] !== null && typeof v["ttl"] !== "number") return null;
  return {
    taskId: v["taskId"],
    status: v["status"] as WireTask["status"],
    ...(typeof v["statusMessage"] === "string" && { statusMessage: v["statusMessage"] }),
    createdAt: v["createdAt"],
    lastUpdatedAt: v["lastUpdatedAt"],
    ttl: v["ttl"],
    ...(typeof v["pollInterval"] === "number" && { pollInterval: v["pollInterval"] }),
  };
}

/** The `task` of a CreateTaskResult (T-NEW-2), or null when `result` is the operation's own result. */
export function readCreatedTask(result: unknown): WireTask | null {
  return readWireTask(pick(result, "task"));
}

/** `_meta["io.modelcontextprotocol/related-task"].taskId` of request params or a result, if any. */
export function relatedTaskIdOf(value: unknown): string | null {
  const taskId = pick(pick(pick(value, "_meta"), RELATED_TASK_META_KEY), "taskId");
  return typeof taskId === "string" ? taskId : null;
}

/** The string under the model-immediate-response `_meta` key of a CreateTaskResult (T-NEW-3). */
export function immediateResponseOf(result: unknown): string | undefined {
  const text = pick(pick(result, "_meta"), MODEL_IMMEDIATE_RESPONSE_META_KEY);
  return typeof text === "string" ? text : undefined;
}

function pick(value: unknown, key: string): unknown {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}
