import type { OwnErrorCodes } from "../../own-error-wire.js";

/**
 * Our own conditions' codes under 2026-07-28. The engine's codes lie in JSON-RPC's
 * implementation-defined server-error range (-32000..-32099); this revision reserves -32020..-32099
 * for codes the specification defines (only -32020, -32021 and -32022 are; implementations MUST NOT
 * emit another, X-ERR-6) and asks new implementations not to use -32000..-32019 — and JSON-RPC
 * reserves all of -32768..-32000 — so ours lie outside, in a block of our own: -31000 less the HTTP
 * status the condition travels with, clear of every reserved range and readable at a glance.
 */
export const OWN_ERROR_CODES_2026: OwnErrorCodes = {
  rateLimited: -31429,
  unauthorized: -31401,
  unavailable: -31503,
};
