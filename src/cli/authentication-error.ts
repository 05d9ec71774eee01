import { RpcCode } from "../core/errors.js";
import { ConnectionError } from "../mcp/requestor/requestor-errors.js";

/**
 * The server refused our credentials (HTTP 401 or 403): no token, a wrong one, or one without the
 * needed scope. On its own (not with connectionFailure, which needs the SDK's HTTP client) so that
 * exit-codes, which `serve` uses too, stays light to load.
 */
export class AuthenticationError extends ConnectionError {
  constructor(
    message: string,
    readonly httpStatus: number,
    cause: unknown,
  ) {
    super(message, RpcCode.ConnectionClosed, cause);
    this.name = "AuthenticationError";
  }
}
