import { ConnectionError } from "./requestor/requestor-errors.js";

/**
 * Why a request to `url` could not be sent or answered, in words: Node's fetch (undici) rejects
 * with a bare "fetch failed" and keeps the reason (a system error code) in `cause`, possibly inside
 * an AggregateError (one per address tried).
 */
export function connectionCause(url: string, error: unknown): string {
  return describeCode(systemCode(error), hostOf(url)) ?? messageChain(error);
}

function describeCode(code: string | undefined, host: string): string | undefined {
  switch (code) {
    case "ECONNREFUSED":
      return `connection refused (nothing listens at ${host}; is the server running?) [ECONNREFUSED]`;
    case "ENOTFOUND":
      return `cannot resolve the host name ${hostnameOf(host)} (DNS lookup failed) [ENOTFOUND]`;
    case "EAI_AGAIN":
      return `cannot resolve the host name ${hostnameOf(host)} (DNS temporarily unavailable) [EAI_AGAIN]`;
    case "UND_ERR_CONNECT_TIMEOUT":
    case "ETIMEDOUT":
      return `timed out connecting to ${host} [${code}]`;
    case "UND_ERR_HEADERS_TIMEOUT":
      return `${host} accepted the connection but sent no answer in time [${code}]`;
    case "ECONNRESET":
    case "UND_ERR_SOCKET":
      return `the connection to ${host} was closed by the other side [${code}]`;
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `no route to ${host} [${code}]`;
    case "CERT_HAS_EXPIRED":
    case "DEPTH_ZERO_SELF_SIGNED_CERT":
    case "SELF_SIGNED_CERT_IN_CHAIN":
    case "UNABLE_TO_VERIFY_LEAF_SIGNATURE":
    case "ERR_TLS_CERT_ALTNAME_INVALID":
      return `the TLS certificate of ${host} is not trusted [${code}]`;
    default:
      return undefined;
  }
}

/** The first system error code (a string `code`) along the cause chain and inside AggregateErrors. */
export function systemCode(error: unknown, depth = 0): string | undefined {
  if (depth > 8 || typeof error !== "object" || error === null) return undefined;
  const { code, cause, errors } = error as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === "string") return code;
  if (Array.isArray(errors)) {
    for (const inner of errors) {
      const found = systemCode(inner, depth + 1);
      if (found !== undefined) return found;
    }
  }
  return systemCode(cause, depth + 1);
}

/** "fetch failed: bad port": the message and those of its causes, which say what fetch does not. */
function messageChain(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) parts.push(e.message);
  return parts.length > 0 ? parts.join(": ") : String(error);
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

function hostnameOf(host: string): string {
  return host.replace(/:\d+$/, "");
}

/**
 * An HTTP 404 where an MCP endpoint was expected — or a 405, a path that refuses POST (a server's
 * web page) — in words, with the path `serve` listens on when the URL has another.
 */
export function notFoundCause(url: string, status: 404 | 405 = 404): string {
  return `HTTP ${status}, no MCP endpoint at this path${pathHint(url)}`;
}

/** "; did you mean http://host/mcp?" for a path that is not /mcp. */
function pathHint(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.pathname === "/mcp") return "";
    parsed.pathname = "/mcp";
    parsed.search = "";
    return `; did you mean ${parsed.href}?`;
  } catch {
    return "";
  }
}

/** The system errors of a connection refused, reset or dropped: the request may or may not have reached the server. */
const DROPS = new Set(["ECONNREFUSED", "ECONNRESET", "ECONNABORTED", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CLOSED"]);

/** A request that failed on its connection (not an answer of the server, not a timeout, not a closed client). */
export function isConnectionDrop(error: unknown): boolean {
  return error instanceof ConnectionError && DROPS.has(systemCode((error as { cause?: unknown }).cause) ?? "");
}
