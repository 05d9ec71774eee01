import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, CancelTaskResultSchema, CreateTaskResultSchema, GetTaskResultSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { UpstreamTasks } from "../../era.js";
import { isTerminalStatus } from "./remote-task.js";
import { relatedTaskIdOf } from "../wire.js";

/**
 * 2025-11-25 toward an upstream server (the gateway's side): a task-augmented `tools/call`
 * (`params.task`), `tasks/get` to poll, `tasks/result` (whose stream carries the task's
 * questions) and `tasks/cancel`, each on the SDK client so its errors stay the SDK's (McpError).
 */
export const upstreamTasks2025: UpstreamTasks = {
  runsAsTask(client: Client, support: string | undefined): boolean {
    const call = client.getServerCapabilities()?.tasks?.requests?.tools?.call;
    return call !== undefined && (support === "optional" || support === "required");
  },

  async create(client, call, options) {
    const result = await client.request(
      { method: "tools/call", params: { name: call.name, arguments: call.args, task: call.ttl === undefined ? {} : { ttl: call.ttl }, ...(call.meta && { _meta: call.meta }) } },
      CreateTaskResultSchema,
      options,
    );
    return result.task.taskId;
  },

  async status(client, taskId, options) {
    const task = await client.request({ method: "tasks/get", params: { taskId } }, GetTaskResultSchema, options);
    return {
      status: task.status,
      terminal: isTerminalStatus(task.status),
      ...(task.statusMessage !== undefined && { statusMessage: task.statusMessage }),
      ...(task.pollInterval !== undefined && { pollIntervalMs: task.pollInterval }),
    };
  },

  async result(client, taskId, options): Promise<CallToolResult> {
    return (await client.request({ method: "tasks/result", params: { taskId } }, CallToolResultSchema, options)) as CallToolResult;
  },

  async cancel(client, taskId, options) {
    await client.request({ method: "tasks/cancel", params: { taskId } }, CancelTaskResultSchema, options);
  },

  relatedTaskOf: (params) => relatedTaskIdOf(params),
};
