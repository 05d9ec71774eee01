import type { OperationTrace } from "../wire-codec.js";
import type { LooseParams } from "../../request-schemas.js";
import { carrierFrom } from "../../tracing/trace-carrier.js";
import { METHOD } from "./wire.js";

/**
 * What a 2026-07-28 request tells its span: the trace context in `params._meta` beside the
 * envelope (SEP-414 keys, unprefixed), the tool it calls, the task it names.
 */
export function operationTrace(method: string, params: LooseParams): OperationTrace {
  const carrier = carrierFrom(params?.["_meta"]);
  const name = params?.["name"];
  const taskId = params?.["taskId"];
  return {
    ...(carrier && { carrier }),
    ...(method === METHOD.toolsCall && typeof name === "string" && { target: name }),
    ...(typeof taskId === "string" && { taskId }),
  };
}
