import { z } from "zod";

/**
 * Loose request schemas: the SDK only needs the method literal to route; the params are validated
 * by our handlers, so bad input gets our -32602 messages instead of a schema dump.
 */
const looseParams = z
  // Any JSON object. Not z.record: zod takes an object with an own `constructor` key for a class
  // instance and refuses it (or throws, when that key is null), though it is only an unknown param.
  .custom<Record<string, unknown>>((value) => typeof value === "object" && value !== null && !Array.isArray(value))
  .optional();

export type LooseParams = Record<string, unknown> | undefined;

/** Any JSON object as a result: used where the requestor's answer is validated later. */
export const AnyResult = z.record(z.string(), z.unknown());

/**
 * A loose schema for a request of any method (routing only; the handler validates the params).
 * `idempotencyKey` is defined for tools/call only (SEP-3182): on any other method it is -32602,
 * never silently ignored — a requestor counting on it would think its retries safe.
 */
export function looseRequest(method: string) {
  const params =
    method === "tools/call" ? looseParams : looseParams.refine((p) => p?.["idempotencyKey"] === undefined, { message: KEY_ELSEWHERE });
  return z.object({ method: z.literal(method), params });
}

/** The refusal of an idempotencyKey on a method other than tools/call. */
export const KEY_ELSEWHERE = "idempotencyKey is defined only for tools/call";
