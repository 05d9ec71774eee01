/**
 * A worker stores its handler's progress reports in the order they were made, and the last one
 * before the outcome, on the real PostgreSQL: a report's write that is slow (a pool connection
 * being re-established after a database restart, say) is waited for, so it never lands after the
 * outcome, where the claim's fencing drops it with a "superseded claim" warning and the completed
 * task keeps an older progress. The slow write is made so by holding that one statement back.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { Logger } from "../../src/core/logger.js";
import type { TaskProgress } from "../../src/core/task.js";
import { localEventBus } from "../../src/events/local-event-bus.js";
import { TaskEngine } from "../../src/runtime/task-engine.js";
import { postgresStore, type PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { deferred } from "../support/conformance.js";
import { freshSchemas, TEST_PG_URL } from "../support/postgres.js";

const schemas = freshSchemas("progress_order");
const closing: Array<{ close(): Promise<void> }> = [];
afterAll(async () => {
  for (const c of closing) await c.close().catch(() => {});
  await schemas.dropAll();
});

const ORIGIN = { sessionId: null, progressToken: null, accepts: [] };

describe("a worker's progress writes", () => {
  it("store the handler's last report before its outcome, even when that report's write is slow", { timeout: 20_000 }, async () => {
    const store = postgresStore(TEST_PG_URL, { schema: schemas.next() });
    closing.push(store);
    const warnings: string[] = [];
    const logger: Logger = {
      debug: () => {},
      info: () => {},
      warn: (_obj: object, msg?: string) => void warnings.push(msg ?? ""),
      error: () => {},
    };
    const handlerReturned = deferred();
    const annotate: PostgresStore["annotate"] = async (id, patch) => {
      // The last report's write is held until the handler has returned and a little longer.
      if ((patch.progress as TaskProgress | undefined)?.progress === 3) {
        await handlerReturned.promise;
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      return store.annotate(id, patch);
    };
    const engine = new TaskEngine({
      store: { ...store, annotate },
      bus: localEventBus(),
      logger,
      runner: async (_task, ctx) => {
        for (let step = 1; step <= 3; step++) ctx.progress(step, 3);
        handlerReturned.resolve();
        return { value: { content: [{ type: "text", text: "done" }] } };
      },
      cluster: { workerId: "w1", concurrency: 1, leaseMs: 5_000, recheckMs: 50, intervalMs: 60_000 },
    });
    closing.push(engine);
    await engine.start();
    const task = await engine.create({ owner: null, method: "tools/call", name: "t", request: {}, origin: ORIGIN, ttl: 600_000 });
    const deadline = Date.now() + 10_000;
    let stored = await store.get(task.id, { any: true });
    while (stored?.status !== "completed" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      stored = await store.get(task.id, { any: true });
    }
    expect(stored).toMatchObject({ status: "completed", progress: { progress: 3, total: 3 } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(warnings.filter((w) => w.includes("superseded claim"))).toEqual([]);
  });
});
