import { allowanceKey, networkOf, type Caller } from "../../core/caller.js";
import { DEFAULT_MAX_KEYS, RateLimiter } from "./rate-limiter.js";

/** How many failed lookups are tolerated, and what happens past that. */
export interface FailedLookupLimit {
  /** Failed lookups one owner may make per `windowMs` (anonymous callers: one address). */
  perOwner: number;
  /**
   * Failed lookups one address may make per `windowMs`, whatever owners it speaks for. Larger than
   * `perOwner` because several principals may share an address (NAT, a proxy not trusted); it is
   * what stops one client from spreading a search over many identities or sessions.
   */
  perPeer: number;
  windowMs: number;
  /** How long every lookup of a key that went over its allowance is refused. */
  cooldownMs: number;
}

export const DEFAULT_FAILED_LOOKUP_LIMIT: FailedLookupLimit = { perOwner: 20, perPeer: 100, windowMs: 60_000, cooldownMs: 60_000 };

/** A refusal of the guard: how long the caller must wait, and the allowance it went over. */
export interface LookupBlock {
  retryAfterMs: number;
  limit: number;
}

/**
 * Stops task id enumeration (T-SEC-4): failed lookups (unknown, foreign or expired ids, bad
 * cursors) are counted per owner and per address; a key over its allowance has every lookup
 * refused for a cool-down, ids that exist included, so a search cannot go on by finding one.
 * The counts live in this process only (a cluster's nodes count separately).
 */
export class FailedLookupGuard {
  private readonly owners: RateLimiter;
  private readonly peers: RateLimiter;
  /** Keys in their cool-down: until when (ms), and the allowance they went over. */
  private readonly blocked = new Map<string, { until: number; limit: number }>();

  constructor(
    private readonly limit: FailedLookupLimit,
    private readonly now: () => number,
    private readonly maxKeys: number = DEFAULT_MAX_KEYS,
  ) {
    const window = limit.windowMs / 1000;
    this.owners = new RateLimiter({ perSecond: limit.perOwner / window, burst: limit.perOwner }, now, maxKeys);
    this.peers = new RateLimiter({ perSecond: limit.perPeer / window, burst: limit.perPeer }, now, maxKeys);
  }

  /** Whether `caller` may look a task up now; a block while one of its keys is cooling down. */
  check(caller: Caller): LookupBlock | null {
    const now = this.now();
    let longest: { until: number; limit: number } | null = null;
    for (const key of keysOf(caller)) {
      if (key === undefined) continue;
      const block = this.blocked.get(key);
      if (block && block.until > now && (!longest || block.until > longest.until)) longest = block;
    }
    return longest ? { retryAfterMs: longest.until - now, limit: longest.limit } : null;
  }

  /**
   * Counts a failed lookup of `caller`. Returns the block it just started when this one went over
   * an allowance (the caller is refused from now on), else null.
   */
  fail(caller: Caller): LookupBlock | null {
    const [ownerKey, peerKey] = keysOf(caller);
    const over: [string, number][] = [];
    if (!this.owners.take(ownerKey).allowed) over.push([ownerKey, this.limit.perOwner]);
    if (peerKey !== undefined && !this.peers.take(peerKey).allowed) over.push([peerKey, this.limit.perPeer]);
    if (over.length === 0) return null;
    const now = this.now();
    const until = now + this.limit.cooldownMs;
    for (const [key, limit] of over) {
      if (this.blocked.size >= this.maxKeys) this.dropExpired(now);
      this.blocked.set(key, { until, limit });
    }
    return { retryAfterMs: this.limit.cooldownMs, limit: over[0]![1] };
  }

  private dropExpired(now: number): void {
    for (const [key, block] of this.blocked) if (block.until <= now) this.blocked.delete(key);
    // Still full: every entry is cooling down; the oldest go first (a bound beats a perfect memory).
    for (const key of this.blocked.keys()) {
      if (this.blocked.size < this.maxKeys) break;
      this.blocked.delete(key);
    }
  }
}

/** The owner key (an anonymous caller counts as its address), then the address key when known. */
function keysOf(caller: Caller): [string, string?] {
  const ownerKey = allowanceKey(caller);
  return caller.peer === undefined ? [ownerKey] : [ownerKey, `peer:${networkOf(caller.peer)}`];
}
