import { ServerResponse, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders } from "node:http";
import { REQUEST_ID_HEADER } from "./request-id.js";
import { closeAfterResponse } from "./unread-body.js";

type Head = OutgoingHttpHeaders | OutgoingHttpHeader[];

/**
 * A response that carries its request's id (`x-request-id`) in its head, whichever path writes
 * that head: an explicit `writeHead`, or the implicit one of a first `write`/`end` (Node's
 * `_implicitHeader` calls `writeHead`). Set with `setHeader` when the request arrives, the id would
 * put every response on Node's slower head-writing path (each header passed to `writeHead`
 * re-validated and merged one `setHeader` at a time), which was a measurable part of a
 * `tasks/get`'s CPU; added here, a head passed whole stays whole.
 *
 * Also the one place that sees every head before it goes out: a response written while a large
 * body of its request is still unread (a refusal before reading: 401, 403, 413, …; see
 * {@link closeAfterResponse}) says `Connection: close`, and Node then closes the connection once
 * the response is sent instead of reading the rest of the body to keep the connection alive —
 * which an unauthenticated client could make as long as it likes.
 */
export class IdentifiedResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  /** Set by the server before the request is handled. */
  requestId: string | undefined;

  override writeHead(statusCode: number, statusMessageOrHeaders?: string | Head, headers?: Head): this {
    if (!this.headersSent && closeAfterResponse(this.req)) this.shouldKeepAlive = false;
    const id = this.requestId;
    if (id === undefined || this.headersSent) return super.writeHead(statusCode, statusMessageOrHeaders as string, headers);
    if (typeof statusMessageOrHeaders === "string")
      return super.writeHead(statusCode, statusMessageOrHeaders, withRequestId(this, headers, id));
    return super.writeHead(statusCode, withRequestId(this, statusMessageOrHeaders, id));
  }
}

/** `head` with the request id added, unless the response or the head already names one. */
function withRequestId(res: ServerResponse, head: Head | undefined, id: string): Head | undefined {
  // Headers already set one by one: the head merges into them, and so does the id.
  if (res.getHeaderNames().length > 0) {
    if (!res.hasHeader(REQUEST_ID_HEADER)) res.setHeader(REQUEST_ID_HEADER, id);
    return head;
  }
  if (head === undefined) return [REQUEST_ID_HEADER, id];
  if (Array.isArray(head))
    return head.some((value, i) => i % 2 === 0 && String(value).toLowerCase() === REQUEST_ID_HEADER)
      ? head
      : [...head, REQUEST_ID_HEADER, id];
  return Object.keys(head).some((name) => name.toLowerCase() === REQUEST_ID_HEADER) ? head : { ...head, [REQUEST_ID_HEADER]: id };
}
