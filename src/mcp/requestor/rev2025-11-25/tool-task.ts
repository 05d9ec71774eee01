import { CallToolResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { RemoteTask, type RemoteTaskOptions } from "./remote-task.js";
import type { TaskPeer } from "./peer.js";

/**
 * A `tools/call` running as a task on the other side of `peer`: its `tasks/result` is a
 * CallToolResult, and one with `isError` is the task failing (T-LIFE-4). TaskClient's tasks and
 * the gateway's upstream tasks are both this handle.
 */
export function toolTask(
  peer: TaskPeer,
  taskId: string,
  options: Omit<RemoteTaskOptions<CallToolResult>, "peer" | "resultSchema" | "isFailure"> = {},
): RemoteTask<CallToolResult> {
  return new RemoteTask<CallToolResult>(taskId, {
    ...options,
    peer,
    resultSchema: CallToolResultSchema,
    isFailure: (result) => result.isError === true,
  });
}
