import { RpcCode, TaskError, toRpcError } from "../core/errors.js";

/**
 * Our own JSON-RPC error codes — the conditions no specification gives a code to — per protocol
 * era, in one table. The engine raises the first column's code (RpcCode); an era's binding writes
 * its own column on the wire, and a requestor recognises a condition by either column.
 *
 * 2025-11-25 keeps the codes it always had, in JSON-RPC's implementation-defined server-error
 * range (-32000..-32099). The 2026-07-28 core reserves -32020..-32099 for codes the specification
 * defines (only -32020, -32021 and -32022 are; implementations MUST NOT emit another, X-ERR-6) and
 * asks new implementations not to use -32000..-32019 — and JSON-RPC reserves all of
 * -32768..-32000 — so under 2026-07-28 our codes lie outside, in a block of our own: -31000 less
 * the HTTP status the condition travels with (-31401, -31429, -31503), clear of every reserved
 * range and readable at a glance. The spec's own codes (-32020..-32022) are not ours and stay as the spec has them.
 */
export type OwnErrorName = "rateLimited" | "unauthorized" | "unavailable";

export interface OwnErrorRow {
  /** The HTTP status the condition travels with, in every era. */
  readonly status: number;
  /** The code per era id (TaskEra.id). */
  readonly codes: Readonly<Record<EraId, number>>;
}

export type EraId = "2025-11-25" | "2026-07-28";

export const OWN_ERROR_CODES: Readonly<Record<OwnErrorName, OwnErrorRow>> = {
  /** A caller over a rate limit or the failed-lookup guard (T-SEC-4); `data.retryAfterMs`. */
  rateLimited: { status: 429, codes: { "2025-11-25": RpcCode.RateLimited, "2026-07-28": -31429 } },
  /** A missing or invalid bearer token (401), or one without the required scope (403). */
  unauthorized: { status: 401, codes: { "2025-11-25": RpcCode.Unauthorized, "2026-07-28": -31401 } },
  /** Draining, or the store unreachable or busy: retry later (`data.retryAfterMs`). */
  unavailable: { status: 503, codes: { "2025-11-25": RpcCode.Unavailable, "2026-07-28": -31503 } },
};

const ROWS = Object.entries(OWN_ERROR_CODES) as [OwnErrorName, OwnErrorRow][];

/** The code `era` writes on the wire for an error the engine raised with `code` (unchanged when it is not one of ours). */
export function wireCodeIn(era: string, code: number): number {
  const row = ROWS.find(([, r]) => r.codes["2025-11-25"] === code);
  return (row && (row[1].codes as Record<string, number>)[era]) ?? code;
}

/** Which of our conditions a code names, in any era's code; undefined for any other code. */
export function ownErrorOf(code: number): OwnErrorName | undefined {
  return ROWS.find(([, row]) => Object.values(row.codes).includes(code))?.[0];
}

/** The HTTP status of one of our codes in an era that moved it, undefined for any other code. */
export function ownErrorStatusOf(code: number): number | undefined {
  const name = ownErrorOf(code);
  return name === undefined ? undefined : OWN_ERROR_CODES[name].status;
}

/**
 * The JSON-RPC error `era` answers for `error`: {@link toRpcError}'s body with the era's code for
 * our own conditions. A code a handler chose (a TaskError of kind "protocol", or any error that
 * carries its own numeric code) is the handler's and goes out as it is, even when it equals one
 * of ours.
 */
export function wireErrorIn(era: string, error: unknown): ReturnType<typeof toRpcError>["body"] {
  const { body } = toRpcError(error);
  const chosenByHandler = error instanceof TaskError ? error.kind === "protocol" : typeof (error as { code?: unknown } | null)?.code === "number";
  return chosenByHandler ? body : { ...body, code: wireCodeIn(era, body.code) };
}
