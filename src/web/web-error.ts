import type { TaskErrorKind } from "../core/errors.js";
import { HttpFailure, httpStatusOfKind } from "../http/rpc-http-errors.js";

/** Why the web API refuses a request: a TaskError kind, or a viewer asking for what it may not see. */
export type WebRefusal = TaskErrorKind | "forbidden";

/**
 * A web API request the server refuses; its HTTP status comes from the server's one table
 * (rpc-http-errors.ts). The message is shown to the caller as is, so it never carries internals.
 */
export class WebRequestError extends Error {
  readonly status: number;

  constructor(reason: WebRefusal, message: string) {
    super(message);
    this.name = "WebRequestError";
    this.status = reason === "forbidden" ? HttpFailure.forbidden.status : httpStatusOfKind(reason);
  }
}
