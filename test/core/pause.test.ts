import { describe, expect, it } from "vitest";
import { pause } from "../../src/core/pause.js";

describe("pause", () => {
  it("resolves once the time has passed", async () => {
    const start = performance.now();
    await pause(30);
    expect(performance.now() - start).toBeGreaterThanOrEqual(25);
  });

  it("rejects with the signal's own reason as soon as it aborts, not after the time", async () => {
    const controller = new AbortController();
    const reason = new Error("cancelled by the requestor");
    const start = performance.now();
    const waiting = pause(10_000, controller.signal);
    setTimeout(() => controller.abort(reason), 20);
    await expect(waiting).rejects.toBe(reason);
    expect(performance.now() - start).toBeLessThan(1_000);
  });

  it("rejects at once with the reason of a signal that has already aborted", async () => {
    const reason = new Error("already gone");
    await expect(pause(10_000, AbortSignal.abort(reason))).rejects.toBe(reason);
  });
});
