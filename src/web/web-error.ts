/**
 * A web API request the server refuses, with the HTTP status to answer. The message is shown to
 * the caller as is, so it never carries internals.
 */
export class WebRequestError extends Error {
  readonly status: number;

  constructor(status: number, message: string) {
    super(message);
    this.name = "WebRequestError";
    this.status = status;
  }
}
