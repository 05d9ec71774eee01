import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  type CreateMessageRequestParams,
  type ElicitRequestParams,
} from "@modelcontextprotocol/sdk/types.js";
import { TaskError } from "../core/errors.js";
import type { TaskRecord } from "../core/task.js";
import type { RunResult, TaskContext } from "../runtime/task-context.js";
import type { ClientReceiverOptions } from "./receiver-options.js";
import { ELICIT, SAMPLE } from "../mcp/tool-context.js";
import { SESSION_ERA } from "../mcp/eras.js";

/**
 * The engine's runner for client-hosted tasks: runs the stored sampling/elicitation request
 * through the application's handler. Its result is the task's result (T-RES-1); a decline or a
 * cancel by the user is a successful answer, not a failure. A handler that throws a JSON-RPC
 * error (e.g. the user rejected a sampling request) fails the task with it (T-RES-4).
 */
export function clientTaskRunner(options: ClientReceiverOptions) {
  return async (task: TaskRecord, ctx: TaskContext): Promise<RunResult> => {
    const params = task.request as Record<string, unknown>;
    const info = { relatedTaskId: SESSION_ERA.wire.relatedTaskOf(params), taskId: task.id, signal: ctx.signal };
    if (task.method === ELICIT && options.elicit) {
      const answer = ElicitResultSchema.safeParse(await options.elicit(params as ElicitRequestParams, info));
      if (!answer.success) throw new TaskError("internal", "The client's elicitation handler returned an invalid result");
      return { value: answer.data };
    }
    if (task.method === SAMPLE && options.sample) {
      const answer = CreateMessageResultSchema.safeParse(await options.sample(params as CreateMessageRequestParams, info));
      if (!answer.success) throw new TaskError("internal", "The client's sampling handler returned an invalid result");
      return { value: answer.data };
    }
    throw new TaskError("method_not_found", `This client cannot run ${task.method}`);
  };
}
