import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import type { UpstreamTasks } from "../requestor-era.js";
import { relatedTaskIdOf } from "../../wire/rev2025-11-25/wire.js";
import { peerOf } from "./peer.js";
import { toolTask } from "./tool-task.js";

/**
 * 2025-11-25 toward an upstream server (the gateway's side): a task-augmented `tools/call`
 * (`params.task`) on the SDK client, then the requestor's own handle on the task — `tasks/get`
 * at its pollInterval, `tasks/result` from `input_required` or its end on (its stream carries the
 * task's questions), `tasks/cancel` — the same {@link toolTask} a TaskClient follows.
 */
export const upstreamTasks2025: UpstreamTasks = {
  // The one task declaration of this era, whatever it holds (T-CAP-2 lists what it may hold).
  clientCapabilities: { tasks: {} },

  runsAsTask(client: Client, support: string | undefined): boolean {
    const call = client.getServerCapabilities()?.tasks?.requests?.tools?.call;
    return call !== undefined && (support === "optional" || support === "required");
  },

  async create(client, call, options) {
    const result = await client.request(
      {
        method: "tools/call",
        params: {
          name: call.name,
          arguments: call.args,
          task: call.ttl === undefined ? {} : { ttl: call.ttl },
          ...(call.meta && { _meta: call.meta }),
        },
      },
      CreateTaskResultSchema,
      options,
    );
    return result.task.taskId;
  },

  task(client, taskId, options) {
    return toolTask(peerOf(client), taskId, {
      requestTimeoutMs: options.requestTimeoutMs,
      pollIntervalBoundsMs: options.pollIntervalBoundsMs,
      ...(options.initial !== undefined && { initial: options.initial }),
    });
  },

  relatedTaskOf: (params) => relatedTaskIdOf(params),
};
