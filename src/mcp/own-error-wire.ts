import { RpcCode, TaskError, toRpcError } from "../core/errors.js";

/**
 * Our own JSON-RPC conditions — those no specification gives a code to. The engine raises each
 * with its own code (RpcCode, in JSON-RPC's implementation-defined server-error range); an era
 * whose revision reserves that range answers another code of its own (`ownErrorCodes` of its
 * TaskEra or StatelessEra), and a requestor recognises a condition by any era's code
 * (`own-error-codes.ts`, from the registry).
 */
export type OwnErrorName = "rateLimited" | "unauthorized" | "unavailable";

/** An era's own code for each of our conditions, where it differs from the engine's. */
export type OwnErrorCodes = Readonly<Partial<Record<OwnErrorName, number>>>;

/** The code the engine raises for each condition, and the HTTP status it travels with in every era. */
export const OWN_ERRORS: Readonly<Record<OwnErrorName, { readonly engineCode: number; readonly status: number }>> = {
  /** A caller over a rate limit or the failed-lookup guard (T-SEC-4); `data.retryAfterMs`. */
  rateLimited: { engineCode: RpcCode.RateLimited, status: 429 },
  /** A missing or invalid bearer token (401), or one without the required scope (403). */
  unauthorized: { engineCode: RpcCode.Unauthorized, status: 401 },
  /** Draining, or the store unreachable or busy: retry later (`data.retryAfterMs`). */
  unavailable: { engineCode: RpcCode.Unavailable, status: 503 },
};

const NAMES = Object.keys(OWN_ERRORS) as OwnErrorName[];

/** The code an era with these `codes` writes on the wire for an error the engine raised with `code` (unchanged when it is not one of ours). */
export function wireCodeIn(codes: OwnErrorCodes, code: number): number {
  const name = NAMES.find((n) => OWN_ERRORS[n].engineCode === code);
  return (name && codes[name]) ?? code;
}

/**
 * The JSON-RPC error an era with these `codes` answers for `error`: {@link toRpcError}'s body with
 * the era's code for our own conditions. A code a handler chose (a TaskError of kind "protocol", or
 * any error that carries its own numeric code) is the handler's and goes out as it is, even when it
 * equals one of ours.
 */
export function wireErrorIn(codes: OwnErrorCodes, error: unknown): ReturnType<typeof toRpcError>["body"] {
  const { body } = toRpcError(error);
  const chosenByHandler =
    error instanceof TaskError ? error.kind === "protocol" : typeof (error as { code?: unknown } | null)?.code === "number";
  return chosenByHandler ? body : { ...body, code: wireCodeIn(codes, body.code) };
}
