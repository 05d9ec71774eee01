import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import { safeParse, type AnySchema } from "@modelcontextprotocol/sdk/server/zod-compat.js";
import type {
  CreateMessageRequestParams,
  ElicitRequestFormParams,
  ServerNotification,
  ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { RpcCode, TaskError } from "../../core/errors.js";
import { SESSION_ERA } from "../eras.js";
import { ELICIT, SAMPLE } from "../tool-context.js";
import type { ToolContext } from "../tool-definition.js";
import type { CreatingRequest } from "./creating-request.js";

export type SdkExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * The `extra` an SDK tool callback gets when it runs as one of our tasks: the same fields it gets
 * on a plain call, each carried by the engine instead of the request's stream —
 * `signal` aborts on tasks/cancel (and expiry, shutdown); `sendNotification` of
 * notifications/progress becomes the task's progress (sent with the token of the creating call,
 * T-PROG-1); `sendRequest` of elicitation/create or sampling/createMessage becomes the task's
 * question (the task shows `input_required` until the requestor's tasks/result answers it,
 * T-INPUT). `requestId` is the task id: the creating request was answered long ago.
 * `authInfo` and `sessionId` are the creating call's while this process runs the task; a task
 * re-run after a restart has neither (a token is never stored).
 */
export function sdkTaskExtra(
  ctx: ToolContext & { taskId: string },
  creating: CreatingRequest | undefined,
  progressToken: string | number | null,
): SdkExtra {
  // The creating call's progress token, so a callback written the SDK's way (report progress
  // when `extra._meta.progressToken` is set) reports it; the engine sends it with that token.
  const meta = { ...(progressToken !== null && { progressToken }), ...SESSION_ERA.wire.relatedTaskMeta(ctx.taskId) };
  return {
    signal: ctx.signal,
    requestId: ctx.taskId,
    taskId: ctx.taskId,
    _meta: meta,
    ...(creating?.authInfo !== undefined && { authInfo: creating.authInfo }),
    ...(creating?.sessionId !== undefined && { sessionId: creating.sessionId }),
    async sendNotification(notification) {
      if (ctx.signal.aborted) return;
      if (notification.method === "notifications/progress") {
        const { progress, total, message } = notification.params;
        ctx.progress(progress, total, message);
        return;
      }
      // Anything else (a log message…) goes to the session that created the task, while it is
      // connected to this process, marked as the task's (T-META-1); otherwise it is dropped.
      await creating?.server.notification(notification, { relatedTask: { taskId: ctx.taskId } }).catch(() => {});
    },
    async sendRequest(request, resultSchema) {
      let answer: unknown;
      if (request.method === ELICIT) answer = await ctx.elicit(request.params as ElicitRequestFormParams);
      else if (request.method === SAMPLE) answer = await ctx.sample(request.params as CreateMessageRequestParams);
      else
        throw TaskError.protocol(RpcCode.MethodNotFound, `A task can ask its requestor only ${ELICIT} or ${SAMPLE}, not ${request.method}`);
      const parsed = safeParse(resultSchema as AnySchema, answer);
      if (!parsed.success)
        throw TaskError.protocol(RpcCode.InvalidParams, `The requestor answered ${request.method} with an invalid result`);
      return parsed.data as never;
    },
  };
}
