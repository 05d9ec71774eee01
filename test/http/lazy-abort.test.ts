import { describe, expect, it } from "vitest";
import { LazyAbort } from "../../src/http/lazy-abort.js";

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
});
