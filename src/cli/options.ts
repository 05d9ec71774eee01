import { InvalidArgumentError } from "commander";

/** Parses a non-negative integer option (ms, ports). */
export function nonNegativeInt(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("expected a non-negative integer");
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new InvalidArgumentError("number too large");
  return n;
}

/** Parses a limit option: a whole number of at least 1 (a limit of 0 would refuse everything). */
export function positiveInt(value: string): number {
  const n = /^\d+$/.test(value) ? nonNegativeInt(value) : 0;
  if (n === 0) throw new InvalidArgumentError("expected an integer of at least 1");
  return n;
}

/** A ttl option: milliseconds, or "unlimited". */
export function ttlMs(value: string): number | null {
  if (value === "unlimited") return null;
  return nonNegativeInt(value);
}

/** `--background-after`: milliseconds, or "off" (null) to switch the fallback for hosts without tasks off. */
export function msOrOff(value: string): number | null {
  if (value === "off") return null;
  return nonNegativeInt(value);
}

export function port(value: string): number {
  const n = nonNegativeInt(value);
  if (n > 65535) throw new InvalidArgumentError("a port is 0..65535");
  return n;
}

/** A repeatable `--answer <json>`: each a JSON object, collected in order. */
export function answerObject(value: string, previous: Array<Record<string, unknown>> = []): Array<Record<string, unknown>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError(`not valid JSON: ${value}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new InvalidArgumentError("expected a JSON object (the elicitation's content)");
  return [...previous, parsed as Record<string, unknown>];
}
