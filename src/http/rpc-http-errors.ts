import { RpcCode, TaskError, type TaskErrorKind } from "../core/errors.js";
import { ownErrorStatusOf } from "../mcp/own-error-codes.js";

/**
 * The HTTP status of every error this server answers over HTTP, in one place.
 *
 * A JSON-RPC error answered by a method (tasks/get of an unknown id, …) travels in an HTTP 200 on
 * the MCP endpoint, as the SDK's transport does; the statuses here are for errors raised before
 * or instead of a method: the endpoint refusing the HTTP request itself, and the web API, whose
 * answers are plain HTTP.
 */

/** A JSON-RPC error code and the HTTP status that carries it. */
export interface HttpRpcFailure {
  readonly code: number;
  readonly status: number;
}

/**
 * The endpoint's own refusals. Several share a code and differ in status (the codes are the SDK
 * transport's, which clients already know); the status is what tells a client what to do next.
 */
export const HttpFailure = {
  /** The body is not JSON (JSON-RPC §5.1). */
  parseError: { code: RpcCode.ParseError, status: 400 },
  /** The body is larger than `maxBodyBytes`. */
  bodyTooLarge: { code: RpcCode.InvalidRequest, status: 413 },
  /** A request other than initialize without a session id. */
  noSession: { code: RpcCode.BadRequest, status: 400 },
  /** An initialize whose params fail its schema. */
  invalidInitialize: { code: RpcCode.InvalidParams, status: 400 },
  /** An MCP-Protocol-Version header this server does not speak (Streamable HTTP: MUST be 400). */
  unsupportedProtocolVersion: { code: RpcCode.BadRequest, status: 400 },
  /** A session id this endpoint does not hold for this principal: 404 makes the client initialize again. */
  sessionNotFound: { code: RpcCode.SessionNotFound, status: 404 },
  /** GET or DELETE without any session id: a malformed request rather than a stale session. */
  sessionIdMissing: { code: RpcCode.SessionNotFound, status: 400 },
  /** No valid bearer token (RFC 6750 §3.1 invalid_token, or no credentials at all). */
  unauthorized: { code: RpcCode.Unauthorized, status: 401 },
  /** A valid token without a required scope (RFC 6750 §3.1 insufficient_scope). */
  forbidden: { code: RpcCode.Unauthorized, status: 403 },
  /** The process holds `maxSessions` sessions: temporary, so 503 with Retry-After. */
  tooManySessions: { code: RpcCode.InvalidRequest, status: 503 },
  /** This client holds its share of sessions: its own doing, so 429. */
  tooManyClientSessions: { code: RpcCode.InvalidRequest, status: 429 },
  /** Bearer tokens cannot be verified right now (the key source is down): not a verdict on the token. */
  verifierUnavailable: { code: RpcCode.InternalError, status: 503 },
  /** A dependency the server needs (the task store) is unreachable: /readyz. */
  unavailable: { code: RpcCode.InternalError, status: 503 },
  /** A Host header outside a loopback bind's allow-list (DNS-rebinding protection), as the SDK's transport answers it. */
  hostNotAllowed: { code: RpcCode.BadRequest, status: 403 },
  /** An Origin header that is not loopback, the server's own or an allowed one (Streamable HTTP: MUST be 403, T-HTTP-1). */
  originNotAllowed: { code: RpcCode.BadRequest, status: 403 },
  /** A Last-Event-ID that names no stored event of the session (malformed, pruned, another session's). */
  unknownEventId: { code: RpcCode.BadRequest, status: 400 },
  /** A JSON-RPC batch (an array body, the empty one included), on any path: batching left MCP in 2025-06-18. */
  batch: { code: RpcCode.InvalidRequest, status: 400 },
  /** Valid JSON that is no JSON-RPC message of MCP (params null, a wrong "jsonrpc", …), on any path. */
  invalidRequest: { code: RpcCode.InvalidRequest, status: 400 },
  /** No route for this path. */
  routeNotFound: { code: RpcCode.MethodNotFound, status: 404 },
  /** A route that exists, with another HTTP method. */
  methodNotAllowed: { code: RpcCode.MethodNotFound, status: 405 },
  /** Anything unexpected: the details stay in the log (T-ERR-4). */
  internal: { code: RpcCode.InternalError, status: 500 },
} as const satisfies Record<string, HttpRpcFailure>;

export type HttpFailureName = keyof typeof HttpFailure;

/** The status for a JSON-RPC code answered as plain HTTP, when nothing more specific is known. */
const STATUS_OF_CODE: ReadonlyMap<number, number> = new Map([
  [RpcCode.ParseError, 400],
  [RpcCode.InvalidRequest, 400],
  [RpcCode.MethodNotFound, 404],
  [RpcCode.InvalidParams, 400],
  [RpcCode.InternalError, 500],
  [RpcCode.BadRequest, 400],
  [RpcCode.SessionNotFound, 404],
  [RpcCode.RateLimited, 429],
  [RpcCode.TaskCancelled, 409],
  [RpcCode.Unavailable, 503],
  // Protocol 2026-07-28 core: both MUST travel in an HTTP 400 (X-HTTP-4, X-CAP-6).
  [RpcCode.HeaderMismatch, 400],
  [RpcCode.MissingRequiredClientCapability, 400],
  // Not 404: a 2026-07-28 client reads the JSON-RPC error (its URI in data) only from a 400.
  [RpcCode.ResourceNotFound, 400],
]);

/**
 * A TaskError's kind says more than its code (not found and a bad cursor are both -32602), so the
 * web API answers by kind. `protocol` carries a handler's own code and goes by that.
 */
const STATUS_OF_KIND: Readonly<Record<Exclude<TaskErrorKind, "protocol">, number>> = {
  not_found: 404,
  expired: 404,
  bad_cursor: 400,
  terminal: 409,
  invalid_params: 400,
  method_not_found: 404,
  cancelled: 409,
  internal: 500,
  rate_limited: 429,
  limit_exceeded: 429,
  // Draining: temporary, and another node can take it.
  unavailable: 503,
};

/** The HTTP status of a JSON-RPC code; 500 for a code this table does not know (a handler's own). */
export function httpStatusOfCode(code: number): number {
  return STATUS_OF_CODE.get(code) ?? ownErrorStatusOf(code) ?? 500;
}

/** The HTTP status of a TaskError's kind; `protocol` (a handler's own code) is 500 here, see {@link httpStatusOf}. */
export function httpStatusOfKind(kind: TaskErrorKind): number {
  return kind === "protocol" ? 500 : STATUS_OF_KIND[kind];
}

/** The HTTP status of a TaskError (by kind), or of any other JSON-RPC error (by code). */
export function httpStatusOf(error: TaskError | { code: number }): number {
  if (error instanceof TaskError && error.kind !== "protocol") return STATUS_OF_KIND[error.kind];
  return httpStatusOfCode(error.code);
}

/**
 * The HTTP status and headers of a JSON-RPC error answered as one plain HTTP response: by code
 * ({@link httpStatusOfCode}), except a creation refused by the queue bound, which is the caller's
 * own load and temporary (429); an error that says when to retry (`data.retryAfterMs`) carries
 * `Retry-After` in whole seconds.
 */
export function httpAnswerOfError(error: { code: number; data?: unknown }): { status: number; headers: Record<string, string> } {
  const data = typeof error.data === "object" && error.data !== null ? (error.data as Record<string, unknown>) : {};
  const status = data["name"] === "queued_tasks" ? 429 : httpStatusOfCode(error.code);
  const retryAfterMs = data["retryAfterMs"];
  const headers: Record<string, string> =
    typeof retryAfterMs === "number" && retryAfterMs >= 0 ? { "retry-after": String(Math.max(1, Math.ceil(retryAfterMs / 1000))) } : {};
  return { status, headers };
}
