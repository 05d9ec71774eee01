/**
 * The PostgreSQL store's coalescer (store/postgres/coalescer.ts): a call with nothing in flight goes
 * out alone and at once; calls made while a batch is in flight go out together when it returns.
 */
import { describe, expect, it } from "vitest";
import { coalescer } from "../../src/store/postgres/coalescer.js";
import { deferred, type Deferred } from "../support/conformance.js";

describe("coalescer", () => {
  it("sends a call at once when nothing is in flight, and the calls made meanwhile as one batch after it", async () => {
    const batches: number[][] = [];
    const answers: Array<Deferred<void>> = [];
    const call = coalescer<number, string>(async (items) => {
      batches.push(items);
      const answer = deferred();
      answers.push(answer);
      await answer.promise;
      return items.map((n) => `r${n}`);
    });
    const first = call(1);
    expect(batches).toEqual([[1]]);
    const later = [call(2), call(3), call(4)];
    expect(batches).toEqual([[1]]);
    answers[0]!.resolve();
    expect(await first).toBe("r1");
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1], [2, 3, 4]]);
    answers[1]!.resolve();
    expect(await Promise.all(later)).toEqual(["r2", "r3", "r4"]);
  });

  it("keeps up to maxInFlight batches out at once and caps a batch at maxBatch; a failed batch rejects each of its calls", async () => {
    const batches: number[][] = [];
    const answers: Array<Deferred<void>> = [];
    const call = coalescer<number, number>(
      async (items) => {
        batches.push(items);
        const answer = deferred();
        answers.push(answer);
        await answer.promise;
        if (items.includes(13)) throw new Error("batch failed");
        return items;
      },
      { maxInFlight: 2, maxBatch: 2 },
    );
    const calls = [1, 2, 11, 12, 13].map((n) => call(n).catch((error: Error) => error.message));
    expect(batches).toEqual([[1], [2]]);
    answers[0]!.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1], [2], [11, 12]]);
    answers[1]!.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1], [2], [11, 12], [13]]);
    answers[2]!.resolve();
    answers[3]!.resolve();
    expect(await Promise.all(calls)).toEqual([1, 2, 11, 12, "batch failed"]);
  });
});
