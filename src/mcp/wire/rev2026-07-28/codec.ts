import type { WireCodec } from "../wire-codec.js";
import { webhookMetaOf } from "../webhook-meta.js";
import { operationTrace } from "./operation-trace.js";
import { OWN_ERROR_CODES_2026 } from "./own-error-codes.js";
import { createTaskResult } from "./task-wire.js";
import { PROTOCOL_VERSION } from "./wire.js";

/**
 * The wire of protocol revision 2026-07-28 with the tasks extension, as every era's codec gives
 * it (`wire-codec.ts`); the rest of this revision's shapes — the envelope, the DetailedTask, its
 * method and `_meta` names — are the other files of this folder, read by the server's binding
 * (`src/mcp/rev2026-07-28/`) and the requestor (`src/mcp/requestor/rev2026-07-28/`) alike.
 */
export const wire20260728 = {
  revision: PROTOCOL_VERSION,
  ownErrorCodes: OWN_ERROR_CODES_2026,
  operationTrace,
  // SEP-3182: params.idempotencyKey.
  idempotencyKeyOf: (params) => params?.["idempotencyKey"],
  webhookRequestOf: webhookMetaOf,
  // X-NEW-1: the extension has no model-immediate-response; the task itself is the answer.
  encodeCreated: (task) => createTaskResult(task),
} satisfies WireCodec;
