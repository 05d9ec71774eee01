import { allowanceKey, type Caller } from "../../core/caller.js";
import { DEFAULT_MAX_KEYS, RateLimiter } from "./rate-limiter.js";

/** How many failed lookups are tolerated, and what happens past that. */
export interface FailedLookupLimit {
  /**
   * Failed lookups one caller may make per `windowMs`: a principal by itself, a caller bound to
   * nobody or only to its session by its address (core/caller.ts, `allowanceKey`).
   */
  perOwner: number;
  windowMs: number;
  /** How long lookups of a caller that went over its allowance are refused. */
  cooldownMs: number;
}

export const DEFAULT_FAILED_LOOKUP_LIMIT: FailedLookupLimit = { perOwner: 20, windowMs: 60_000, cooldownMs: 60_000 };

/** A refusal of the guard: how long the caller must wait, and the allowance it went over. */
export interface LookupBlock {
  retryAfterMs: number;
  limit: number;
}

/**
 * Stops task id enumeration (T-SEC-4): failed lookups (unknown, foreign or expired ids, bad
 * cursors) are counted per caller — per principal when there is one, per address for callers
 * bound to nobody or only to their session (every anonymous caller shares the null owner, and a
 * client mints a new session at will) — and a caller over its allowance cools down. Principals
 * sharing an address (NAT, a proxy) each keep their own allowance: what one of them does never
 * refuses another. Which lookups a cooling caller is refused is the engine's decision
 * (limits/caller-limits.ts). The counts live in this process only (a cluster's nodes count
 * separately).
 */
export class FailedLookupGuard {
  private readonly callers: RateLimiter;
  /** Keys in their cool-down: until when (ms). */
  private readonly blocked = new Map<string, number>();

  constructor(
    private readonly limit: FailedLookupLimit,
    private readonly now: () => number,
    private readonly maxKeys: number = DEFAULT_MAX_KEYS,
  ) {
    this.callers = new RateLimiter({ perSecond: limit.perOwner / (limit.windowMs / 1000), burst: limit.perOwner }, now, maxKeys);
  }

  /** The block of `caller` while it is cooling down, else null. */
  check(caller: Caller): LookupBlock | null {
    const until = this.blocked.get(allowanceKey(caller));
    const now = this.now();
    return until !== undefined && until > now ? { retryAfterMs: until - now, limit: this.limit.perOwner } : null;
  }

  /**
   * Counts a failed lookup of `caller`. Returns the block it just started when this one went over
   * the allowance (the caller cools down from now on), else null.
   */
  fail(caller: Caller): LookupBlock | null {
    const key = allowanceKey(caller);
    if (this.callers.take(key).allowed) return null;
    const now = this.now();
    if (this.blocked.size >= this.maxKeys) this.dropExpired(now);
    this.blocked.set(key, now + this.limit.cooldownMs);
    return { retryAfterMs: this.limit.cooldownMs, limit: this.limit.perOwner };
  }

  private dropExpired(now: number): void {
    for (const [key, until] of this.blocked) if (until <= now) this.blocked.delete(key);
    // Still full: every entry is cooling down; the oldest go first (a bound beats a perfect memory).
    for (const key of this.blocked.keys()) {
      if (this.blocked.size < this.maxKeys) break;
      this.blocked.delete(key);
    }
  }
}
