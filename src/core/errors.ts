import { BUSY_RETRY_AFTER_MS, storageCondition } from "./storage-condition.js";

/**
 * Typed errors. Each carries the JSON-RPC code it maps to, so the `mcp` layer translates any of
 * them with one normalizer (`toRpcError`) and never guesses.
 */
export const RpcCode = {
  // JSON-RPC 2.0 §5.1.
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /**
   * `tasks/result` of a cancelled task. The spec defines no code for it; -32800 is the
   * "request cancelled" code of the LSP family of JSON-RPC protocols, outside the range
   * JSON-RPC reserves, so it cannot be mistaken for a lookup failure (-32602).
   */
  TaskCancelled: -32800,
  /**
   * A caller over a rate limit (T-SEC-4), in the range JSON-RPC leaves to implementations
   * (-32000..-32099; the SDK holds -32000, -32001 and -32042); 29 after HTTP 429. Not -32602,
   * which would tell the client its id is wrong, nor -32603, which would say the server broke:
   * a code of its own lets a client back off for `data.retryAfterMs` and try again.
   */
  RateLimited: -32029, // under 2026-07-28 the era answers another code: mcp/own-error-codes.ts
  /**
   * The server cannot take this request now but another one (or this one shortly) can: it is
   * draining before a restart or a deploy and takes no new task work (docs/deployment.md). In the
   * implementation-defined range (-32000..-32019, X-ERR-6), clear of
   * the SDK's -32000/-32001; `data.retryAfterMs` says when to try again, like
   * {@link RpcCode.RateLimited}.
   */
  Unavailable: -32003, // likewise (mcp/own-error-codes.ts)
  /**
   * The Streamable HTTP answer to a request the endpoint cannot take as it stands (no session id
   * on a request that needs one, an unsupported protocol version): the code the SDK's transport
   * answers with, so clients see the same on every path. The SDK's client also raises it locally
   * as "connection closed" ({@link RpcCode.ConnectionClosed}).
   */
  BadRequest: -32000,
  /** The SDK client's own code for a connection that closed before the answer came. */
  ConnectionClosed: -32000,
  /**
   * An HTTP request naming a session this endpoint does not hold (or holds for another
   * principal): the SDK transport's code for it. HTTP 404 tells the client to initialize again.
   */
  SessionNotFound: -32001,
  /** An HTTP request without a valid bearer token (401) or without a required scope (403). */
  Unauthorized: -32001, // likewise (mcp/own-error-codes.ts)
  /** The SDK client's own code for a request that got no answer in time. */
  RequestTimeout: -32001,
  /**
   * Protocol 2026-07-28 (SEP-2243): an HTTP header (Mcp-Method, Mcp-Name, MCP-Protocol-Version)
   * that disagrees with the body, or a required one missing (X-HTTP-4). In the range the MCP spec
   * reserves (-32020..-32099, X-ERR-6), so it is the spec's code, never one of ours.
   */
  HeaderMismatch: -32020,
  /** Protocol 2026-07-28: the request needs a client capability it did not declare (X-CAP-6, X-ERR-4). */
  MissingRequiredClientCapability: -32021,
  /** `resources/read` (or subscribe) of a URI no resource answers to: the MCP spec's code, the URI in `data`. */
  ResourceNotFound: -32002,
} as const;

/** What went wrong, as a {@link TaskError} names it; each kind has its JSON-RPC code (docs/errors.md). */
export type TaskErrorKind =
  | "not_found"
  | "expired"
  | "bad_cursor"
  | "terminal"
  | "invalid_params"
  | "method_not_found"
  | "cancelled"
  | "internal"
  | "rate_limited"
  | "limit_exceeded"
  | "unavailable"
  | "protocol";

const CODE_OF: Record<TaskErrorKind, number> = {
  not_found: RpcCode.InvalidParams, // T-ERR-1
  expired: RpcCode.InvalidParams, // T-ERR-7
  bad_cursor: RpcCode.InvalidParams, // T-ERR-2
  terminal: RpcCode.InvalidParams, // T-ERR-3, T-CANCEL-2
  invalid_params: RpcCode.InvalidParams,
  method_not_found: RpcCode.MethodNotFound, // T-TOOL-2/4
  cancelled: RpcCode.TaskCancelled,
  internal: RpcCode.InternalError, // T-ERR-4
  rate_limited: RpcCode.RateLimited, // T-SEC-4
  // T-TTL-7: a refused request is refused as a whole; none of its params is wrong (not -32602).
  limit_exceeded: RpcCode.InvalidRequest,
  unavailable: RpcCode.Unavailable,
  protocol: RpcCode.InternalError, // overridden by the carried code
};

/**
 * An error with a kind and a JSON-RPC code, answered to the requestor as that error: thrown by the
 * engine, and by a tool handler that wants a specific code (`TaskError.protocol(code, message, data)`).
 */
export class TaskError extends Error {
  readonly kind: TaskErrorKind;
  readonly code: number;
  readonly data: unknown;

  constructor(kind: TaskErrorKind, message: string, options: { code?: number; data?: unknown } = {}) {
    super(message);
    this.name = "TaskError";
    this.kind = kind;
    this.code = options.code ?? CODE_OF[kind];
    this.data = options.data;
  }

  static notFound(): TaskError {
    return new TaskError("not_found", "Task not found");
  }

  static expired(): TaskError {
    return new TaskError("expired", "Task has expired");
  }

  static badCursor(): TaskError {
    return new TaskError("bad_cursor", "Invalid cursor");
  }

  static terminal(status: string): TaskError {
    return new TaskError("terminal", `Cannot cancel task: already in terminal status '${status}'`);
  }

  static invalidParams(message: string): TaskError {
    return new TaskError("invalid_params", message);
  }

  static internal(): TaskError {
    return new TaskError("internal", "Internal error");
  }

  /**
   * The caller is over a rate limit (T-SEC-4). `data`: `name` says which (docs/limits.md), `limit`
   * its allowance, `retryAfterMs` how long until the same request can succeed.
   */
  static rateLimited(name: string, limit: number, retryAfterMs: number): TaskError {
    return new TaskError("rate_limited", `Rate limit exceeded (${name}): retry in ${retryAfterMs} ms`, {
      data: { name, limit, retryAfterMs },
    });
  }

  /**
   * A quota was hit (docs/limits.md). `data` names the limit and its value, so a
   * client can tell which one without parsing the message. `code` is for the limits a handler hits
   * while running, whose error ends up as the task's outcome rather than a refused request.
   */
  static limitExceeded(
    name: string,
    limit: number,
    message: string,
    extra: { code?: number; data?: Record<string, unknown> } = {},
  ): TaskError {
    return new TaskError("limit_exceeded", message, {
      ...(extra.code !== undefined && { code: extra.code }),
      data: { limit, name, ...extra.data },
    });
  }

  /**
   * The server is draining (a restart or deploy is under way) and takes no new task work; the
   * same request sent again — to another node of a cluster, or here once the server is back —
   * can succeed. `clustered`: other servers share the store and take the request at once; a
   * single server's callers wait for its restart. `data.reason` is "draining".
   */
  static draining(retryAfterMs: number, clustered: boolean): TaskError {
    const retry = clustered ? "retry, another server will take the request" : "retry once the server has restarted";
    return new TaskError("unavailable", `The server is shutting down and takes no new tasks; ${retry}`, {
      data: { reason: "draining", retryAfterMs },
    });
  }

  /** A JSON-RPC error a handler chose to end with; replayed verbatim by `tasks/result` (T-RES-4). */
  static protocol(code: number, message: string, data?: unknown): TaskError {
    return new TaskError("protocol", message, { code, data });
  }
}

/** A JSON-RPC error object. */
export interface RpcErrorBody {
  code: number;
  message: string;
  data?: unknown;
}

const SDK_PREFIX = /^MCP error -?\d+: /;

/**
 * A message without the "MCP error <code>: " the SDK's McpError puts in front of it: the
 * requestor must see the words of whoever raised the error, once, whatever path it took.
 */
export function withoutSdkPrefix(message: string): string {
  return message.replace(SDK_PREFIX, "");
}

/** Names of the SDK's JSON-RPC error classes (1.x McpError, 2.x ProtocolError), matched by name: another copy of the SDK fails `instanceof`. */
const SDK_ERROR_NAMES = new Set(["McpError", "ProtocolError"]);
const KINDS = new Set<string>(Object.keys(CODE_OF));

/**
 * Whether a thrown value already is a JSON-RPC error: a safe-integer code and a message, raised
 * as one on purpose — a TaskError (of this copy of the package or another), the SDK's error
 * class, or a plain `{code, message}` object. An arbitrary Error that happens to carry a numeric
 * `code` (a gRPC status, a driver's errno) is not: its message would leak internals (T-ERR-4).
 */
function isRpcError(error: unknown): error is { code: number; message: string; data?: unknown } {
  if (!isCoded(error)) return false;
  if (error instanceof TaskError || !(error instanceof Error)) return true;
  const kind = (error as { kind?: unknown }).kind;
  return isSdkError(error) || (typeof kind === "string" && KINDS.has(kind));
}

function isCoded(error: unknown): error is { code: number; message: string; data?: unknown; name?: unknown } {
  if (typeof error !== "object" || error === null) return false;
  const e = error as { code?: unknown; message?: unknown };
  return Number.isSafeInteger(e.code) && typeof e.message === "string";
}

/** The SDK's JSON-RPC error (McpError), from whichever copy of the SDK raised it. */
export function isSdkError(error: unknown): error is { code: number; message: string; data?: unknown } {
  return isCoded(error) && typeof error.name === "string" && SDK_ERROR_NAMES.has(error.name);
}

/**
 * The one normalizer from anything thrown to the JSON-RPC error to answer (or to keep as a task's
 * outcome for `tasks/result`, T-RES-4): a JSON-RPC error keeps its code, message (without the
 * SDK's prefix) and data, and is `known`; a store that is full, read-only or busy
 * ({@link storageCondition}) is -32603 naming the condition (-32003 with `retryAfterMs` when busy:
 * it clears by itself); anything else is -32603 "Internal error". Neither is `known`: the caller
 * logs the driver's error, whose details never go on the wire (T-ERR-4).
 */
export function toRpcError(error: unknown): { body: RpcErrorBody; known: boolean } {
  if (!isRpcError(error)) {
    const condition = storageCondition(error);
    if (!condition) return { body: { code: RpcCode.InternalError, message: "Internal error" }, known: false };
    const body: RpcErrorBody = condition.retryable
      ? { code: RpcCode.Unavailable, message: condition.message, data: { reason: condition.reason, retryAfterMs: BUSY_RETRY_AFTER_MS } }
      : { code: RpcCode.InternalError, message: condition.message, data: { reason: condition.reason } };
    return { body, known: false };
  }
  const body: RpcErrorBody = { code: error.code, message: withoutSdkPrefix(error.message) };
  if (error.data !== undefined) body.data = error.data;
  return { body, known: true };
}
