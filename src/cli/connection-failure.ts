import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { RpcCode } from "../core/errors.js";
import { ConnectionError } from "../mcp/requestor/requestor-errors.js";
import { AuthenticationError } from "./authentication-error.js";
import { connectionCause, notFoundCause } from "../mcp/connection-cause.js";

/**
 * Why connecting to `url` failed, in words: Node's fetch (undici) rejects with a bare "fetch failed"
 * and keeps the reason (a system error code) in `cause`, possibly inside an AggregateError (one per
 * address tried); an HTTP refusal of our credentials is an authentication failure, not a
 * connection problem.
 */
export function connectionFailure(url: string, error: unknown, hadToken: boolean): ConnectionError {
  // Already said in words by the OAuth flow (oauth/oauth-session.ts), maybe wrapped on its way up.
  const refused = authenticationErrorIn(error);
  if (refused) return refused;
  if (error instanceof StreamableHTTPError && (error.code === 401 || error.code === 403)) {
    const what =
      error.code === 401
        ? hadToken
          ? "did not accept the token"
          : "requires a token"
        : "refused the token (HTTP 403: not allowed, or missing a scope)";
    const fix = !hadToken
      ? "pass one with --token or MCP_TASKS_TOKEN"
      : error.code === 403
        ? "use a token with the needed rights"
        : "pass a valid one with --token or MCP_TASKS_TOKEN";
    return new AuthenticationError(`Authentication failed at ${url}: the server ${what}; ${fix}`, error.code, error);
  }
  if (error instanceof ConnectionError && error.message.startsWith("Cannot connect to ")) return error;
  // An MCP endpoint takes POST: a path that answers 405 to it is not one either (a server's web page, say).
  const status = httpStatusOf(error);
  if (status === 404 || status === 405)
    return new ConnectionError(`Cannot connect to ${url}: ${notFoundCause(url, status)}`, RpcCode.ConnectionClosed, error);
  return new ConnectionError(`Cannot connect to ${url}: ${connectionCause(url, error)}`, RpcCode.ConnectionClosed, error);
}

/** The AuthenticationError along `error`'s cause chain: the fetch of a transport threw it, a layer above wrapped it. */
export function authenticationErrorIn(error: unknown): AuthenticationError | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++)
    if (e instanceof AuthenticationError) return e;
  return undefined;
}

/** The HTTP status an SDK transport error carries (StreamableHTTPError.code), if any. */
function httpStatusOf(error: unknown): number | undefined {
  if (error instanceof StreamableHTTPError && typeof error.code === "number") return error.code;
  return undefined;
}
