/**
 * deadlineSignal: AbortSignal.any([...signals, AbortSignal.timeout(ms)]) built from a controller
 * and a timer of our own (Node 20 collects the built-in's timeout signal before it fires; the
 * drain test runs that case in a real process under --expose-gc, test/e2e/drain-signals.test.ts).
 */
import { describe, expect, it } from "vitest";
import { deadlineSignal } from "../../src/core/deadline-signal.js";

const aborted = (signal: AbortSignal): Promise<unknown> =>
  new Promise((resolve) => signal.addEventListener("abort", () => resolve(signal.reason), { once: true }));

describe("deadlineSignal", () => {
  it("aborts at its deadline with the given reason", async () => {
    const started = performance.now();
    const deadline = deadlineSignal({ timeoutMs: 50, reason: "over" });
    expect(await aborted(deadline.signal)).toBe("over");
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
  });

  it("aborts at its deadline with a TimeoutError when no reason is given, as AbortSignal.timeout does", async () => {
    const deadline = deadlineSignal({ timeoutMs: 1 });
    expect(await aborted(deadline.signal)).toMatchObject({ name: "TimeoutError" });
  });

  it("aborts with a source's reason when the source aborts first, and lets go of the timer", async () => {
    const source = new AbortController();
    const deadline = deadlineSignal({ signals: [source.signal, undefined], timeoutMs: 60_000 });
    source.abort("stop");
    expect(deadline.signal.aborted).toBe(true);
    expect(deadline.signal.reason).toBe("stop");
  });

  it("is aborted at once when a source already is", () => {
    const deadline = deadlineSignal({ signals: [AbortSignal.abort("already")], timeoutMs: 60_000 });
    expect(deadline.signal.reason).toBe("already");
  });

  it("after clear(), neither the deadline nor a source aborts it, and the source keeps no listener of it", async () => {
    const source = new AbortController();
    let added = 0;
    let removed = 0;
    const add = source.signal.addEventListener.bind(source.signal);
    const remove = source.signal.removeEventListener.bind(source.signal);
    source.signal.addEventListener = ((...args: Parameters<typeof add>) => (added++, add(...args))) as typeof add;
    source.signal.removeEventListener = ((...args: Parameters<typeof remove>) => (removed++, remove(...args))) as typeof remove;
    const deadline = deadlineSignal({ signals: [source.signal], timeoutMs: 20 });
    deadline.clear();
    await new Promise((resolve) => setTimeout(resolve, 60));
    source.abort("late");
    expect(deadline.signal.aborted).toBe(false);
    expect([added, removed]).toEqual([1, 1]);
  });
});
