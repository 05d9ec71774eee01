import type { TaskRecord } from "../core/task.js";

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
export function toWireTask(task: TaskRecord): WireTask {
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

/** T-META-1: `_meta` with the related-task key, merged into existing `_meta`. */
export function withRelatedTask<T extends object>(value: T, taskId: string): T & { _meta: Record<string, unknown> } {
  const existing = (value as { _meta?: unknown })._meta;
  const meta = typeof existing === "object" && existing !== null ? (existing as Record<string, unknown>) : {};
  return { ...value, _meta: { ...meta, [RELATED_TASK_META_KEY]: { taskId } } };
}
