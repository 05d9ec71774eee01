import { flatUuid } from "../core/flat-uuid.js";
import type { IncomingMessage } from "node:http";

/** Header carrying a request's id, in both directions. */
export const REQUEST_ID_HEADER = "x-request-id";

// Ids from a proxy in front are kept (so one id follows a request through both logs) only when
// they look like ids: short and plain, so nothing odd reaches log lines or response headers.
const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's id: the caller's `x-request-id` when well-formed, else a fresh UUID. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === "string" && ACCEPTABLE.test(given) ? given : flatUuid();
}
