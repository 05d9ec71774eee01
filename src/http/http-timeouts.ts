import type { ServerOptions } from "node:http";

/** How long a client may take to send a request's headers: 10 s. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
/** How long a client may take to send a whole request, headers and body: 60 s. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** How long an idle keep-alive connection stays open after a response: 5 s (Node's own default). */
export const DEFAULT_KEEP_ALIVE_TIMEOUT_MS = 5_000;

/** The time limits on receiving requests (docs/limits.md). */
export interface HttpTimeouts {
  /**
   * A connection whose request's headers have not all arrived this long after its first byte
   * (or, on a new connection, after it opened) is closed, with a 408 when nothing was answered.
   * Default 10 s.
   */
  headersTimeoutMs?: number;
  /**
   * A request not received in full (headers and body) this long after its first byte is cut the
   * same way. It bounds receiving only: a response being sent, an SSE stream included, is never
   * cut by it. Not below `headersTimeoutMs`. Default 60 s.
   */
  requestTimeoutMs?: number;
  /** An idle keep-alive connection is closed after this long. Default 5 s. */
  keepAliveTimeoutMs?: number;
}

/**
 * Node's server options for {@link HttpTimeouts}. Node checks its connections for the first two
 * limits on an interval (30 s by default, which would let a slow client hold a connection that
 * much longer); here it is a quarter of the shorter limit, at most 1 s.
 */
export function serverTimeouts(
  timeouts: HttpTimeouts,
): Pick<ServerOptions, "headersTimeout" | "requestTimeout" | "keepAliveTimeout" | "connectionsCheckingInterval"> {
  const headersTimeout = timeouts.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const requestTimeout = timeouts.requestTimeoutMs ?? Math.max(DEFAULT_REQUEST_TIMEOUT_MS, headersTimeout);
  const keepAliveTimeout = timeouts.keepAliveTimeoutMs ?? DEFAULT_KEEP_ALIVE_TIMEOUT_MS;
  for (const [name, value] of Object.entries({
    headersTimeoutMs: headersTimeout,
    requestTimeoutMs: requestTimeout,
    keepAliveTimeoutMs: keepAliveTimeout,
  })) {
    if (!Number.isSafeInteger(value) || value <= 0)
      throw new RangeError(`${name} must be a positive whole number of milliseconds, got ${value}`);
  }
  if (headersTimeout > requestTimeout)
    throw new RangeError(`headersTimeoutMs (${headersTimeout}) must not exceed requestTimeoutMs (${requestTimeout})`);
  return { headersTimeout, requestTimeout, keepAliveTimeout, connectionsCheckingInterval: Math.min(1000, Math.ceil(headersTimeout / 4)) };
}
