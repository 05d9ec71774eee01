import type { TaskEvent } from "../../../events/task-event.js";
import { wireTaskOf, withRelatedTask } from "./wire.js";

/**
 * The notification a bus event is on a session's standalone stream (T-NOTE-1, T-PROG-1): a status
 * change of a task this session created (not its creation: the CreateTaskResult said that), or
 * its progress with the related-task metadata; null for anything else.
 */
export function streamNotificationOf(event: TaskEvent, sessionId: string): Record<string, unknown> | null {
  if (event.type === "status") {
    if (event.sessionId !== sessionId || event.created) return null;
    return { jsonrpc: "2.0", method: "notifications/tasks/status", params: wireTaskOf(event) };
  }
  if (event.type === "progress") {
    if (event.sessionId !== sessionId || event.progressToken === null) return null;
    return {
      jsonrpc: "2.0",
      method: "notifications/progress",
      params: withRelatedTask({ progressToken: event.progressToken, ...event.progress }, event.taskId),
    };
  }
  return null;
}
