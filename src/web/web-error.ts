import type { TaskErrorKind } from "../core/errors.js";
import { HttpFailure, httpStatusOfKind } from "../http/rpc-http-errors.js";

/**
 * Why the web API refuses a request: a TaskError kind, a viewer asking for what it may not see,
 * or a body larger than the API reads.
 */
export type WebRefusal = TaskErrorKind | "forbidden" | "body_too_large";

/**
 * A web API request the server refuses; its HTTP status comes from the server's one table
 * (rpc-http-errors.ts). The message is shown to the caller as is, so it never carries internals.
 */
export class WebRequestError extends Error {
  readonly status: number;

  constructor(reason: WebRefusal, message: string) {
    super(message);
    this.name = "WebRequestError";
    this.status = statusOf(reason);
  }
}

/** The web API's own refusals get the statuses the MCP endpoint gives the same refusals. */
function statusOf(reason: WebRefusal): number {
  if (reason === "forbidden") return HttpFailure.forbidden.status;
  if (reason === "body_too_large") return HttpFailure.bodyTooLarge.status;
  return httpStatusOfKind(reason);
}
