import type { TaskRecord } from "../../../core/task.js";
import { toWireTask } from "./wire.js";

/** T-NOTE-1 (MAY), T-NOTE-3: a client-hosted task's status as the notification carrying it, the full Task, no related-task `_meta`. */
export function taskStatusNotification(task: TaskRecord): { method: string; params: Record<string, unknown> } {
  return { method: "notifications/tasks/status", params: { ...toWireTask(task) } };
}
