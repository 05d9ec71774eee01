import { createHash } from "node:crypto";
import { RpcCode, TaskError } from "./errors.js";

/**
 * Idempotent creation (SEP-3182 "Request Idempotency"): a requestor names an operation with a key,
 * and every request bearing that key from the same caller is the same operation. Nothing here
 * knows a wire field; the bindings read the key from their request and hand it over.
 */

/** Bounds of a key: an opaque, non-empty string of at most this many characters. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** `retryAfterMs` of the in-progress refusal: the original call is still running, ask again shortly. */
export const IN_PROGRESS_RETRY_AFTER_MS = 1000;

/**
 * A key as stored and the fingerprint of the call it was first used with. Two calls with the same
 * key are the same operation when their fingerprints are equal; otherwise the second is a conflict.
 */
export interface TaskKey {
  /** `r:` and the requestor's key, or `d:` and a fingerprint for a key the server derived. */
  key: string;
  fingerprint: string;
}

/**
 * The two namespaces of stored keys: a requestor's, and those derived for a repeated identical
 * keyless plain call of a tool that declared itself idempotent, which no requestor can name.
 */
const REQUESTED_PREFIX = "r:";
const DERIVED_PREFIX = "d:";

/** The key a requestor sent, checked: a string of 1 to {@link MAX_IDEMPOTENCY_KEY_LENGTH} characters, else -32602. */
export function checkIdempotencyKey(value: unknown): string {
  if (typeof value !== "string") throw TaskError.invalidParams("Invalid params: idempotencyKey must be a string");
  // Characters as a person counts them (code points), not UTF-16 units: an emoji is one.
  const characters = value.length > 4 * MAX_IDEMPOTENCY_KEY_LENGTH ? value.length : [...value].length;
  if (characters === 0 || characters > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw TaskError.invalidParams(`Invalid params: idempotencyKey must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters long`);
  }
  return value;
}

/**
 * JSON text with every object's members in code-point order: two values equal as parsed JSON give
 * the same text whatever their key order, whitespace or escapes were, and numbers are written by
 * value (`1` and `1.0` parse to the same number).
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const members = Object.keys(value)
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${members.join(",")}}`;
  }
  // -0 and 0 are the same JSON value; JSON.stringify already writes -0 as "0".
  return JSON.stringify(value) ?? "null";
}

/** The fingerprint of a call: which operation (a tool's name) with which arguments, as parsed JSON. */
export function callFingerprint(name: string, args: unknown): string {
  return createHash("sha256")
    .update(canonicalJson({ name, arguments: args ?? {} }))
    .digest("base64url");
}

/** A requestor's key with the fingerprint of the call it came with. */
export function requestedKey(key: string, name: string, args: unknown): TaskKey {
  return { key: `${REQUESTED_PREFIX}${key}`, fingerprint: callFingerprint(name, args) };
}

/** The key of a keyless identical call (same caller, tool and arguments), for deduplicating a host's retries. */
export function derivedKey(name: string, args: unknown): TaskKey {
  const fingerprint = callFingerprint(name, args);
  return { key: `${DERIVED_PREFIX}${fingerprint}`, fingerprint };
}

export function isDerivedKey(key: TaskKey): boolean {
  return key.key.startsWith(DERIVED_PREFIX);
}

/** The requestor's own key of a stored one (what error data names). */
export function requestorKeyOf(key: TaskKey): string {
  return key.key.startsWith(REQUESTED_PREFIX) ? key.key.slice(REQUESTED_PREFIX.length) : key.key;
}

/**
 * The key was used before with another tool or other arguments: refused, nothing run (SEP-3182).
 * A client error in what it sent (-32602), told apart by `data.type`.
 */
export function keyConflict(key: string): TaskError {
  return new TaskError(
    "invalid_params",
    "The idempotencyKey was already used with a different tool or different arguments; use a new key for a new call",
    {
      data: { type: "idempotency_key_conflict", idempotencyKey: key },
    },
  );
}

/**
 * A plain call whose key's original call is still running and has no answer to replay yet
 * (SEP-3182): refused at once rather than run twice or held open. Retryable, so -32003 with
 * `retryAfterMs` like the other "try again shortly" refusals, told apart by `data.type`.
 */
export function keyInProgress(key: string): TaskError {
  return new TaskError("unavailable", "A request with this idempotencyKey is still in progress; retry shortly for its answer", {
    code: RpcCode.Unavailable,
    data: { type: "idempotency_key_in_progress", idempotencyKey: key, retryAfterMs: IN_PROGRESS_RETRY_AFTER_MS },
  });
}
