/**
 * A blocked tasks/result is answered from the event of the task's terminal transition, which
 * carries the stored outcome: the store is read once, for the lookup (T-RES-3).
 */
import { describe, expect, it } from "vitest";
import { localEventBus } from "../../src/events/local-event-bus.js";
import { TaskEngine } from "../../src/runtime/task-engine.js";
import { memoryStore } from "../../src/store/memory/memory-store.js";
import { deferred } from "../support/conformance.js";

describe("awaitOutcome", () => {
  it("answers from the terminal status event without reading the task back", async () => {
    const store = memoryStore();
    let reads = 0;
    const counted = { ...store, get: (...args: Parameters<typeof store.get>) => (reads++, store.get(...args)) };
    const finish = deferred();
    const started = deferred();
    const engine = new TaskEngine({
      store: counted,
      bus: localEventBus(),
      runner: async () => {
        started.resolve();
        await finish.promise;
        return { value: { content: [{ type: "text", text: "done" }] } };
      },
    });
    await engine.start();
    try {
      const caller = { owner: "alice" };
      const task = await engine.create({
        ...caller,
        method: "tools/call",
        name: "t",
        request: {},
        origin: { sessionId: null, progressToken: null, accepts: [] },
        ttl: 60_000,
      });
      await started.promise;
      const before = reads;
      const waiting = engine.awaitOutcome(task.id, caller, new AbortController().signal);
      await new Promise((resolve) => setTimeout(resolve, 20));
      finish.resolve();
      const ended = await waiting;
      expect(ended).toMatchObject({
        id: task.id,
        status: "completed",
        owner: "alice",
        outcome: { kind: "result", value: { content: [{ type: "text", text: "done" }] } },
      });
      expect(reads - before).toBe(1);
    } finally {
      await engine.close();
    }
  });
});
