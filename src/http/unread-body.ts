import type { IncomingMessage } from "node:http";

/**
 * The largest unread body still drained after a refusal to keep the connection for the next
 * request: reading it costs less than the client's new connection would.
 */
const DRAINED_BODY_BYTES = 64 * 1024;

/**
 * Whether a response written now must close its connection: the request announced a body that
 * has not been received in full — of unknown length (Transfer-Encoding) or of a declared
 * Content-Length over 64 KiB. A response written before the body was read is a refusal (401, 403,
 * 413, 429, 503…), and keeping the connection would mean reading whatever the client sends first,
 * as long as it likes; closing it reads nothing more.
 */
export function closeAfterResponse(req: IncomingMessage): boolean {
  if (req.complete) return false;
  if (req.headers["transfer-encoding"] !== undefined) return true;
  // Node has refused a malformed Content-Length before any handler runs.
  return Number(req.headers["content-length"] ?? 0) > DRAINED_BODY_BYTES;
}
