import type { LooseParams } from "../../request-schemas.js";
import { carrierFrom } from "../../tracing/trace-carrier.js";
import type { OperationTrace } from "../wire-codec.js";

/**
 * What a 2025-11-25 request tells its span: the trace context in `params._meta` (SEP-414:
 * `traceparent`, `tracestate`, `baggage`), the tool or prompt it names, the task it names.
 */
export function operationTrace(method: string, params: LooseParams, plain?: { sessionStreamCarriesOwnTasks: boolean }): OperationTrace {
  const carrier = carrierFrom(params?.["_meta"]);
  const name = params?.["name"];
  const taskId = params?.["taskId"];
  return {
    ...(carrier && { carrier }),
    ...((method === "tools/call" || method === "prompts/get") && typeof name === "string" && { target: name }),
    ...(typeof taskId === "string" && { taskId }),
    // Asked as plain JSON, these go to the session server's stream at once (`methods[…].plain` of the binding):
    // a tools/call without `params.task` runs the tool there, and on a local session a tasks/result
    // carries the task's notifications there.
    ...(plain &&
      ((method === "tools/call" && params?.["task"] === undefined) ||
        (method === "tasks/result" && !plain.sessionStreamCarriesOwnTasks)) && { servedOnStream: true }),
  };
}
