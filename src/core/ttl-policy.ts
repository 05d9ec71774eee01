import { TaskError } from "./errors.js";

/** How long tasks live. Defaults are documented in the (docs/limits.md). */
export interface TtlPolicy {
  /** Used when the requestor asks for no ttl. null = unlimited. */
  defaultTtlMs: number | null;
  /** Requested ttls above this are capped to it (T-TTL-3, T-TTL-7). null = no cap. */
  maxTtlMs: number | null;
  /** Requested ttls below this are raised to it, so a task lives long enough to be fetched. */
  minTtlMs: number;
}

export const DEFAULT_TTL_POLICY: TtlPolicy = {
  defaultTtlMs: 60 * 60 * 1000, // 1 hour
  maxTtlMs: 24 * 60 * 60 * 1000, // 24 hours
  minTtlMs: 1000, // 1 second
};

/**
 * The ttl a new task actually gets. `requested` is the raw `params.task.ttl`, still unvalidated:
 * a bad value is the requestor's error (-32602), not something to silently replace.
 */
export function resolveTtl(requested: unknown, policy: TtlPolicy): number | null {
  // A default in milliseconds obeys the same bounds as a requested ttl: above the cap it is the
  // cap, below the minimum it is raised to it. An unlimited default is the operator's explicit
  // choice for tasks that ask for none, and stays unlimited.
  if (requested === undefined || requested === null) return policy.defaultTtlMs === null ? null : within(policy.defaultTtlMs, policy);
  if (typeof requested !== "number" || !Number.isFinite(requested)) {
    throw TaskError.invalidParams("Invalid task ttl: must be a finite number of milliseconds");
  }
  if (requested < 0) throw TaskError.invalidParams("Invalid task ttl: must not be negative");
  return within(Math.floor(requested), policy);
}

function within(ttlMs: number, policy: TtlPolicy): number {
  if (policy.maxTtlMs !== null && ttlMs > policy.maxTtlMs) return policy.maxTtlMs;
  return Math.max(ttlMs, policy.minTtlMs);
}
