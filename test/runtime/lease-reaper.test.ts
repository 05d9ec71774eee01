/**
 * The lease reaper against the real PostgreSQL, on what it can tell about a lease that ran out:
 * a node that could not reach the store gives the workers a lease's time once it can again (they
 * lost the store too, and may hold outcomes to store), and a task whose worker still beats was
 * lost to the store, not to a dead worker — its message says the outcome could not be stored.
 */
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/logger.js";
import type { NewTask } from "../../src/core/task.js";
import { localEventBus } from "../../src/events/local-event-bus.js";
import { LeaseReaper } from "../../src/runtime/cluster/lease-reaper.js";
import { silentObserver } from "../../src/runtime/engine-observer.js";
import { postgresStore, type PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { newTask } from "../../src/testing/store-contract.js";
import { freePort } from "../support/free-port.js";
import { freshSchemas, TEST_PG_URL } from "../support/postgres.js";

const schemas = freshSchemas("reaper");
const stores: PostgresStore[] = [];
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await schemas.dropAll();
});

function open(url = TEST_PG_URL): PostgresStore {
  const store = postgresStore(url, { schema: schemas.next() });
  stores.push(store);
  return store;
}

/** A task of a tool that declares no recovery, claimed by `worker` at `at` with a 1 s lease. */
async function leased(store: PostgresStore, worker: string, at: number, overrides: Partial<NewTask> = {}): Promise<string> {
  const task = await store.create(newTask({ createdAt: at, ttlMs: null, ...overrides }));
  expect((await store.claim(worker, 1, 1000, at)).map((t) => t.id)).toEqual([task.id]);
  return task.id;
}

describe("lease reaper", () => {
  it("after it could not reach the store, reaps nothing for a lease's time, then reaps as before", async () => {
    const store = open();
    const down = postgresStore(`postgres://postgres@127.0.0.1:${await freePort()}/test`, { schema: "mcp_tasks" });
    stores.push(down);
    let clock = Date.now();
    const id = await leased(store, "w1", clock - 5000);
    let reachable = false;
    // The real store, reached through a server that is not there until `reachable`.
    const flaky = { ...store, expiredLeases: (now: number, limit: number) => (reachable ? store : down).expiredLeases(now, limit) };
    const reaper = new LeaseReaper(
      { store: flaky, bus: localEventBus(), logger: silentLogger, now: () => clock, observer: silentObserver },
      { leaseMs: 3000 },
    );

    await expect(reaper.runOnce()).resolves.toBeUndefined(); // the loop logs the failure and goes on
    reachable = true;
    await reaper.runOnce();
    expect((await store.get(id, { any: true }))?.status).toBe("working");
    clock += 2999;
    await reaper.runOnce();
    expect((await store.get(id, { any: true }))?.status).toBe("working");
    clock += 1;
    await reaper.runOnce();
    expect(await store.get(id, { any: true })).toMatchObject({
      status: "failed",
      statusMessage: expect.stringMatching(/^The task's worker stopped responding \(lease expired\)/),
    });
  });

  it("fails a task whose worker still beats saying the outcome could not be stored before the lease ran out", async () => {
    const store = open();
    const now = Date.now();
    const id = await leased(store, "w-alive", now - 5000);
    await store.heartbeat({ workerId: "w-alive", startedAt: now - 10_000, concurrency: 1, leaseMs: 30_000 }, now);
    const reaper = new LeaseReaper({ store, bus: localEventBus(), logger: silentLogger, now: () => now, observer: silentObserver });
    await reaper.runOnce();
    expect(await store.get(id, { any: true })).toMatchObject({
      status: "failed",
      statusMessage:
        'The task\'s worker could not reach the task store for longer than its lease: the outcome could not be stored before the lease ran out; it was not re-run because it was created when its tool declared no recovery ("resume" or "retry")',
    });
  });

  it("fails a task whose worker stopped beating saying the worker stopped responding", async () => {
    const store = open();
    const now = Date.now();
    const id = await leased(store, "w-gone", now - 5000);
    const reaper = new LeaseReaper({ store, bus: localEventBus(), logger: silentLogger, now: () => now, observer: silentObserver });
    await reaper.runOnce();
    expect((await store.get(id, { any: true }))?.statusMessage).toBe(
      'The task\'s worker stopped responding (lease expired); it was not re-run because it was created when its tool declared no recovery ("resume" or "retry")',
    );
  });
});
