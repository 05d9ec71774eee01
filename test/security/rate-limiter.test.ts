/**
 * The building blocks of the per-caller limits (T-SEC-4), on an injected clock: the token bucket
 * (burst, sustained rate, bounded memory) and the failed-lookup guard (allowance per owner and per
 * address, then a cool-down). The limits as a client meets them are in rate-limit.test.ts.
 */
import { describe, expect, it } from "vitest";
import { networkOf } from "../../src/core/caller.js";
import { FailedLookupGuard } from "../../src/runtime/limits/failed-lookup-guard.js";
import { RateLimiter } from "../../src/runtime/limits/rate-limiter.js";

function clock(start = 1_000_000): { now: () => number; advance(ms: number): void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

describe("T-SEC-4: token bucket", () => {
  it("allows a burst at once, then refuses with the time until the next token", () => {
    const c = clock();
    const limiter = new RateLimiter({ perSecond: 10, burst: 5 }, c.now);
    for (let i = 0; i < 5; i++) expect(limiter.take("k").allowed).toBe(true);
    expect(limiter.take("k")).toEqual({ allowed: false, retryAfterMs: 100, first: true });
    // Still refused: no longer the first refusal (the audit line is written once per episode).
    expect(limiter.take("k")).toEqual({ allowed: false, retryAfterMs: 100, first: false });
  });

  it("refills at the sustained rate, never above the burst", () => {
    const c = clock();
    const limiter = new RateLimiter({ perSecond: 10, burst: 5 }, c.now);
    for (let i = 0; i < 5; i++) limiter.take("k");
    c.advance(250); // 2.5 tokens
    expect(limiter.take("k").allowed).toBe(true);
    expect(limiter.take("k").allowed).toBe(true);
    expect(limiter.take("k")).toMatchObject({ allowed: false, retryAfterMs: 50 });
    c.advance(3_600_000);
    for (let i = 0; i < 5; i++) expect(limiter.take("k").allowed).toBe(true);
    expect(limiter.take("k").allowed).toBe(false);
  });

  it("keeps one bucket per key: one key's exhaustion leaves another's burst intact", () => {
    const c = clock();
    const limiter = new RateLimiter({ perSecond: 1, burst: 2 }, c.now);
    limiter.take("a");
    limiter.take("a");
    expect(limiter.take("a").allowed).toBe(false);
    expect(limiter.take("b").allowed).toBe(true);
  });

  it("holds at most maxKeys keys, however many distinct keys come (bounded memory)", () => {
    const c = clock();
    const limiter = new RateLimiter({ perSecond: 1, burst: 2 }, c.now, 100);
    for (let i = 0; i < 1000; i++) {
      limiter.take(`flood-${i}`);
      expect(limiter.size).toBeLessThanOrEqual(100);
    }
  });

  it("evicts idle (refilled) buckets before busy ones, so a busy key keeps its count", () => {
    const c = clock();
    const limiter = new RateLimiter({ perSecond: 1, burst: 2 }, c.now, 100);
    limiter.take("busy");
    limiter.take("busy");
    for (let i = 0; i < 99; i++) limiter.take(`one-off-${i}`);
    c.advance(1500); // the one-off buckets are full again; "busy" has 1.5 of 2
    limiter.take("newcomer"); // the first key past the bound sweeps the 99 idle ones
    expect(limiter.size).toBe(2);
    expect(limiter.take("busy").allowed).toBe(true);
    expect(limiter.take("busy").allowed).toBe(false); // 0.5 left: kept, not reset to a full burst
  });
});

describe("T-SEC-4: failed-lookup guard", () => {
  const limit = { perOwner: 3, windowMs: 60_000, cooldownMs: 30_000 };

  it("tolerates perOwner failures, then the next one starts a cool-down that refuses every lookup of that owner", () => {
    const c = clock();
    const guard = new FailedLookupGuard(limit, c.now);
    const alice = { owner: "local|alice", peer: "10.0.0.1" };
    for (let i = 0; i < 3; i++) {
      expect(guard.check(alice)).toBeNull();
      expect(guard.fail(alice)).toBeNull();
    }
    expect(guard.fail(alice)).toEqual({ retryAfterMs: 30_000, limit: 3 });
    c.advance(10_000);
    expect(guard.check(alice)).toEqual({ retryAfterMs: 20_000, limit: 3 });
    c.advance(20_000);
    expect(guard.check(alice)).toBeNull();
  });

  it("counts an anonymous caller by its address, so anonymous callers elsewhere are unaffected", () => {
    const c = clock();
    const guard = new FailedLookupGuard(limit, c.now);
    const prober = { owner: null, peer: "10.0.0.1" };
    for (let i = 0; i < 4; i++) guard.fail(prober);
    expect(guard.check(prober)).not.toBeNull();
    expect(guard.check({ owner: null, peer: "10.0.0.2" })).toBeNull();
  });

  it("counts principals behind one address each by itself: five of them at their allowance leave one another untouched", () => {
    const c = clock();
    const guard = new FailedLookupGuard(limit, c.now);
    const principals = Array.from({ length: 5 }, (_, i) => ({ owner: `local|user-${i}`, peer: "10.0.0.9" }));
    for (const principal of principals) for (let i = 0; i < 3; i++) expect(guard.fail(principal)).toBeNull();
    for (const principal of principals) expect(guard.check(principal)).toBeNull();
    expect(guard.fail(principals[0]!)).toEqual({ retryAfterMs: 30_000, limit: 3 });
    expect(guard.check(principals[0]!)).not.toBeNull();
    expect(guard.check(principals[1]!)).toBeNull();
  });

  it("counts session-bound callers by their address, so a new session brings no new allowance", () => {
    const c = clock();
    const guard = new FailedLookupGuard(limit, c.now);
    const session = (n: number): { owner: string; peer: string } => ({ owner: `session:${String(n).padStart(22, "A")}`, peer: "10.0.0.9" });
    for (let i = 0; i < 3; i++) expect(guard.fail(session(i))).toBeNull();
    expect(guard.fail(session(3))).not.toBeNull();
    expect(guard.check(session(0))).not.toBeNull();
    expect(guard.check({ ...session(0), peer: "10.0.0.10" })).toBeNull();
  });

  it("counts IPv6 callers by their /64, so a client rotating addresses inside its block gains nothing", () => {
    const c = clock();
    const guard = new FailedLookupGuard(limit, c.now);
    for (let i = 1; i <= 4; i++) guard.fail({ owner: null, peer: `2001:db8:1:2:${i.toString(16)}::${i}` });
    expect(guard.check({ owner: null, peer: "2001:0db8:0001:0002:ffff:ffff:ffff:ffff" })).not.toBeNull();
    expect(guard.check({ owner: null, peer: "2001:db8:1:3::1" })).toBeNull();
  });
});

describe("T-SEC-4: the network a peer is counted as", () => {
  it("is the address itself for IPv4 (also IPv4-mapped), and the /64 for IPv6", () => {
    expect(networkOf("10.0.0.1")).toBe("10.0.0.1");
    expect(networkOf("::ffff:10.0.0.1")).toBe("10.0.0.1");
    expect(networkOf("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(networkOf("2001:0DB8:0001:0002:0:0:0:7")).toBe("2001:db8:1:2::/64");
    expect(networkOf("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(networkOf("::1")).toBe("0:0:0:0::/64");
    expect(networkOf("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(networkOf("stdio")).toBe("stdio");
    expect(networkOf(undefined)).toBe("-");
  });
});
