/**
 * The worker pool against the real PostgreSQL: a claimed task's handler starts without reading
 * the task again, so a cancel that lands while the claim is in flight must be caught by the pool.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { TaskRecord } from "../../src/core/task.js";
import { localEventBus } from "../../src/events/local-event-bus.js";
import { TaskEngine } from "../../src/runtime/task-engine.js";
import { postgresStore } from "../../src/store/postgres/postgres-store.js";
import { deferred } from "../support/conformance.js";
import { pgQuery, TEST_PG_URL, uniqueName } from "../support/postgres.js";

const schema = uniqueName("pool");
afterAll(async () => {
  await pgQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
});

describe("worker pool", () => {
  it("does not start the handler of a task cancelled while the claim that returned it was in flight (T-CANCEL-3)", async () => {
    const store = postgresStore(TEST_PG_URL, { schema });
    const claimReturned = deferred<TaskRecord[]>();
    const release = deferred();
    let gated = true;
    // The real store, with the first claim's answer held back until the test lets it through.
    const heldStore = {
      ...store,
      async claim(...args: Parameters<typeof store.claim>) {
        const rows = await store.claim(...args);
        if (gated && rows.length > 0) {
          gated = false;
          claimReturned.resolve(rows);
          await release.promise;
        }
        return rows;
      },
    };
    const started: string[] = [];
    const ran = deferred<string>();
    const engine = new TaskEngine({
      store: heldStore,
      bus: localEventBus(),
      runner: async (task) => {
        started.push(task.id);
        ran.resolve(task.id);
        return { value: { ok: true } };
      },
      cluster: { workerId: "w1", concurrency: 4, recheckMs: 50 },
    });
    await engine.start();
    try {
      const caller = { owner: null };
      const first = await engine.create({ owner: null, method: "tools/call", name: "t", request: {}, origin: { sessionId: null, progressToken: null, accepts: [] }, ttl: 60_000 });
      expect((await claimReturned.promise).map((t) => t.id)).toEqual([first.id]);
      await engine.cancel(first.id, caller);
      release.resolve();

      // The pool has dealt with that claim once a later task's handler ran.
      const second = await engine.create({ owner: null, method: "tools/call", name: "t", request: {}, origin: { sessionId: null, progressToken: null, accepts: [] }, ttl: 60_000 });
      expect(await ran.promise).toBe(second.id);
      expect(started).toEqual([second.id]);
      expect((await engine.get(first.id, caller)).status).toBe("cancelled");
    } finally {
      await engine.close();
      await store.close();
    }
  });
});
