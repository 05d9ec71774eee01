import { describe, expect, it } from "vitest";
import { LazyAbort } from "../../src/core/lazy-abort.js";

describe("LazyAbort", () => {
  it("is not aborted until abort is called, and its signal then is", () => {
    const abort = new LazyAbort();
    const signal = abort.signal;
    expect(abort.aborted).toBe(false);
    expect(signal.aborted).toBe(false);
    let heard: unknown;
    signal.addEventListener("abort", () => (heard = signal.reason));
    abort.abort("gone");
    expect(abort.aborted).toBe(true);
    expect(signal.aborted).toBe(true);
    expect(heard).toBe("gone");
  });

  it("gives a signal asked for after the abort already aborted, with the first reason", () => {
    const abort = new LazyAbort();
    abort.abort("first");
    abort.abort("second");
    expect(abort.signal.aborted).toBe(true);
    expect(abort.signal.reason).toBe("first");
  });

  it("hands out one signal however often it is asked", () => {
    const abort = new LazyAbort();
    expect(abort.signal).toBe(abort.signal);
  });

  it("calls its own listeners once, in order, without making a signal, and none removed or added after the abort", () => {
    const abort = new LazyAbort();
    const heard: string[] = [];
    const first = { handleEvent: () => heard.push(`first ${String(abort.reason)}`) };
    const second = (): void => void heard.push("second");
    const removed = (): void => void heard.push("removed");
    abort.addEventListener("abort", first);
    abort.addEventListener("abort", removed);
    abort.addEventListener("abort", second);
    abort.removeEventListener("abort", removed);
    expect(abort.reason).toBeUndefined();
    abort.abort("gone");
    abort.abort("again");
    abort.addEventListener("abort", () => heard.push("late"));
    expect(heard).toEqual(["first gone", "second"]);
    expect(abort.reason).toBe("gone");
  });

  it("forgets its one listener once removed", () => {
    const abort = new LazyAbort();
    let heard = 0;
    const listener = (): void => void heard++;
    abort.addEventListener("abort", listener);
    abort.removeEventListener("abort", listener);
    abort.abort("gone");
    expect(heard).toBe(0);
  });
});
