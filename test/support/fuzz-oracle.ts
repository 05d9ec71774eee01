/**
 * What the fuzz suite accepts as an answer to a malformed message (the oracle): a JSON-RPC error
 * — never -32603, which would mean bad input broke something — or a well-formed result; for
 * garbage at the envelope level an HTTP 4xx carrying a JSON-RPC error; HTTP 202 only when nothing
 * in the body asked for an answer (notifications and responses, JSON-RPC 2.0 §4.1). Never a 5xx.
 */
import type { WireMessage } from "./http-fixture.js";
import type { RpcExchange } from "./rpc-exchange.js";

/** Why an answer is unacceptable, or null when it is fine. */
export type Verdict = string | null;

/** A request the server must answer: a string or integer id and a method (what the SDK accepts as a request). */
function isRequest(message: unknown): message is { id: string | number; method: string } {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return false;
  const m = message as Record<string, unknown>;
  return m["jsonrpc"] === "2.0" && typeof m["method"] === "string" && (typeof m["id"] === "string" || Number.isSafeInteger(m["id"]));
}

/** Whether the error is one a client can act on: an integer code, a message, and not "internal". */
function errorVerdict(error: unknown): Verdict {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (!e || !Number.isSafeInteger(e.code) || typeof e.message !== "string") return `malformed error object ${JSON.stringify(error)}`;
  if (e.code === -32603) return `internal error for bad input: ${e.message}`;
  return null;
}

/**
 * Judges the answer to one POST whose body was `sent` (the text as sent). `secrets` are strings
 * (another principal's task ids) that must not appear in an answer unless the body itself had them.
 */
export function judge(sent: string, exchange: RpcExchange, secrets: readonly string[]): Verdict {
  if (exchange.status >= 500) return `HTTP ${exchange.status}: ${exchange.text.slice(0, 200)}`;
  for (const secret of secrets) {
    if (exchange.text.includes(secret) && !sent.includes(secret)) return `the answer names ${secret}, which the request did not`;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(sent);
  } catch {
    parsed = undefined;
  }
  if (exchange.status >= 400) {
    const body = exchange.messages[0];
    if (exchange.messages.length !== 1 || !body?.error)
      return `HTTP ${exchange.status} without a JSON-RPC error: ${exchange.text.slice(0, 200)}`;
    return errorVerdict(body.error);
  }
  const requests = (Array.isArray(parsed) ? parsed : [parsed]).filter(isRequest);
  if (exchange.status === 202) return requests.length === 0 ? null : `HTTP 202 though ${requests.length} request(s) wanted an answer`;
  if (exchange.status !== 200) return `unexpected HTTP ${exchange.status}`;
  for (const request of requests) {
    const answer = exchange.messages.find((m: WireMessage) => m.id === request.id && m.method === undefined);
    if (!answer) return `no answer to request ${JSON.stringify(request.id)} (${request.method})`;
    if (answer.error !== undefined) {
      const verdict = errorVerdict(answer.error);
      if (verdict) return verdict;
    } else if (typeof answer.result !== "object" || answer.result === null)
      return `answer without result or error: ${JSON.stringify(answer)}`;
  }
  return null;
}
