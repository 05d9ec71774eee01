import type { RemoteTaskProgress } from "../mcp/requestor/remote-task-info.js";
import type { Reattach } from "./follow-task.js";
import { connectTarget, type Handlers, type Target } from "./target.js";

/**
 * How a command reaches its task again after the connection was lost: a new connection to the
 * target (a new session under 2025-11-25, the task's era from the journal) and the task resumed by
 * id. Undefined over stdio, where the server was the command's own child and went with the connection.
 */
export function reattachTo(
  target: Target,
  taskId: string,
  handlers: Handlers,
  dir: string,
  onProgress: (progress: RemoteTaskProgress) => void,
): Reattach | undefined {
  if (target.kind !== "http") return undefined;
  return async () => {
    const again = await connectTarget(target, handlers, dir, { taskId });
    try {
      return { task: await again.tasks.resume(taskId, { onProgress }), close: () => again.close() };
    } catch (error) {
      await again.close();
      throw error;
    }
  };
}
