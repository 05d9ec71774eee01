/** A token bucket's shape: `burst` tokens at most, refilled at `perSecond`. */
export interface RateLimit {
  /** Sustained rate: tokens added per second. */
  perSecond: number;
  /** Bucket size: how many operations may come at once after a quiet spell. */
  burst: number;
}

/** What {@link RateLimiter.take} decided. */
export type RateDecision =
  | { allowed: true }
  | {
      allowed: false;
      /** Until a token is back. */
      retryAfterMs: number;
      /** True for the first refusal since the key was last allowed: the moment worth an audit line. */
      first: boolean;
    };

interface Bucket {
  tokens: number;
  /** When `tokens` was last brought up to date (ms). */
  at: number;
  /** The last take was refused. */
  limited: boolean;
}

/** How many keys a limiter holds before it evicts; bounds memory whatever the callers do. */
export const DEFAULT_MAX_KEYS = 10_000;

/**
 * Token buckets keyed by string (an owner, a peer address), in bounded memory: once `maxKeys`
 * keys are held, idle buckets (refilled to full, so indistinguishable from a new one) are dropped,
 * then the least recently used. Evicting a busy bucket only hands its key a fresh burst, so a
 * caller would need more distinct keys than `maxKeys` to gain anything from it.
 */
export class RateLimiter {
  /** In least-recently-used order: every take moves its key to the end. */
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly limit: RateLimit,
    private readonly now: () => number,
    private readonly maxKeys: number = DEFAULT_MAX_KEYS,
  ) {
    if (!(limit.perSecond > 0) || !(limit.burst >= 1)) throw new Error("a rate limit needs perSecond > 0 and burst >= 1");
  }

  /** Takes one token for `key`, or says how long until one is back. */
  take(key: string): RateDecision {
    const now = this.now();
    const bucket = this.refilled(key, now);
    this.buckets.delete(key);
    this.buckets.set(key, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      bucket.limited = false;
      return { allowed: true };
    }
    const first = !bucket.limited;
    bucket.limited = true;
    return { allowed: false, retryAfterMs: Math.ceil(((1 - bucket.tokens) * 1000) / this.limit.perSecond), first };
  }

  /** Keys held now (for tests of the memory bound). */
  get size(): number {
    return this.buckets.size;
  }

  /** Gives back a token taken for an operation that was handed on, not done (never above the burst). */
  giveBack(key: string): void {
    const bucket = this.buckets.get(key);
    if (bucket) bucket.tokens = Math.min(this.limit.burst, bucket.tokens + 1);
  }

  private refilled(key: string, now: number): Bucket {
    const bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= this.maxKeys) this.evict(now);
      return { tokens: this.limit.burst, at: now, limited: false };
    }
    // A clock that steps back (tests, NTP) adds nothing rather than removing tokens.
    const elapsed = Math.max(0, now - bucket.at);
    bucket.tokens = Math.min(this.limit.burst, bucket.tokens + (elapsed * this.limit.perSecond) / 1000);
    bucket.at = now;
    return bucket;
  }

  /** Drops idle buckets, then the least recently used, down to 90% of the bound (not one per insert). */
  private evict(now: number): void {
    const target = Math.floor(this.maxKeys * 0.9);
    for (const [key, bucket] of this.buckets) {
      const tokens = bucket.tokens + (Math.max(0, now - bucket.at) * this.limit.perSecond) / 1000;
      if (tokens >= this.limit.burst) this.buckets.delete(key);
    }
    for (const key of this.buckets.keys()) {
      if (this.buckets.size <= target) break;
      this.buckets.delete(key);
    }
  }
}
