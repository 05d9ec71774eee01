import type { TaskRecord } from "../core/task.js";

/**
 * What every audit line about a task names (T-SEC-5): the task, its owner, the request method
 * that made it, and the address it was created from — for lines written by no request (the
 * task's end, expiry, recovery), the creator is the caller worth recording.
 */
export function taskAuditFields(task: TaskRecord): { taskId: string; owner: string | null; method: string; peer: string | null } {
  return { taskId: task.id, owner: task.owner, method: task.method, peer: task.origin.peer ?? null };
}
