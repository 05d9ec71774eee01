/**
 * The worker pool against the real PostgreSQL: a claimed task's handler starts without reading
 * the task again, so a cancel that lands while the claim is in flight must be caught by the pool;
 * a full pool claims what queued meanwhile as soon as a slot frees, and a pool that was not full
 * claims nothing when a handler finishes (the queue announces new work with events).
 */
import { afterAll, describe, expect, it } from "vitest";
import type { TaskRecord } from "../../src/core/task.js";
import { localEventBus } from "../../src/events/local-event-bus.js";
import { pgEventBus } from "../../src/events/pg-event-bus.js";
import { TaskEngine } from "../../src/runtime/task-engine.js";
import { postgresStore } from "../../src/store/postgres/postgres-store.js";
import { tablesOf } from "../../src/store/postgres/sql.js";
import { deferred, type Deferred } from "../support/conformance.js";
import { pgQuery, TEST_PG_URL, uniqueName } from "../support/postgres.js";

const schema = uniqueName("pool");
afterAll(async () => {
  await pgQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
});

/** Polls `done` every 10 ms until it holds; fails naming `what` after `timeoutMs`. */
async function until(what: string, done: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The database sessions LISTENing on `channel` now. */
async function listenersOn(channel: string): Promise<number> {
  const { rows } = await pgQuery("SELECT count(*) AS n FROM pg_stat_activity WHERE query = $1", [`LISTEN ${channel}`]);
  return Number((rows[0] as { n: string }).n);
}

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
      const first = await engine.create({
        owner: null,
        method: "tools/call",
        name: "t",
        request: {},
        origin: { sessionId: null, progressToken: null, accepts: [] },
        ttl: 60_000,
      });
      expect((await claimReturned.promise).map((t) => t.id)).toEqual([first.id]);
      await engine.cancel(first.id, caller);
      release.resolve();

      // The pool has dealt with that claim once a later task's handler ran.
      const second = await engine.create({
        owner: null,
        method: "tools/call",
        name: "t",
        request: {},
        origin: { sessionId: null, progressToken: null, accepts: [] },
        ttl: 60_000,
      });
      expect(await ran.promise).toBe(second.id);
      expect(started).toEqual([second.id]);
      expect((await engine.get(first.id, caller)).status).toBe("cancelled");
    } finally {
      await engine.close();
      await store.close();
    }
  });

  it("beats while idle, shows its leases while it runs, and leaves the cluster view as soon as it closes", async () => {
    const store = postgresStore(TEST_PG_URL, { schema });
    const view = postgresStore(TEST_PG_URL, { schema });
    const release = deferred();
    const engine = new TaskEngine({
      store,
      bus: localEventBus(),
      runner: async () => {
        await release.promise;
        return { value: { ok: true } };
      },
      cluster: { workerId: "beating-worker", concurrency: 3, leaseMs: 900, recheckMs: 50 },
    });
    const before = Date.now();
    await engine.start();
    try {
      const mine = async () => (await view.clusterView(Date.now())).workers.find((w) => w.workerId === "beating-worker");
      await expect.poll(mine, { timeout: 5000 }).toMatchObject({ concurrency: 3, leaseMs: 900, running: 0 });
      const first = (await mine())!;
      expect(first.startedAt).toBeGreaterThanOrEqual(before);
      // Idle, it still beats every third of its lease: the view keeps it alive past one lease.
      await new Promise((resolve) => setTimeout(resolve, 1200));
      expect((await mine())?.heartbeatAt).toBeGreaterThan(first.heartbeatAt);
      expect((await mine())?.startedAt).toBe(first.startedAt);

      const task = await engine.create({
        owner: null,
        method: "tools/call",
        name: "held",
        request: {},
        origin: { sessionId: null, progressToken: null, accepts: [] },
        ttl: 60_000,
      });
      await expect
        .poll(async () => (await view.clusterView(Date.now())).leases.map((l) => [l.taskId, l.name, l.workerId]), { timeout: 5000 })
        .toEqual([[task.id, "held", "beating-worker"]]);
      expect((await mine())?.running).toBe(1);
      release.resolve();
      await expect.poll(async () => (await view.clusterView(Date.now())).leases, { timeout: 5000 }).toEqual([]);
    } finally {
      await engine.close();
    }
    // Retired by the close, not left to time out: gone well before its 900 ms heartbeat would run out.
    expect((await view.clusterView(Date.now())).workers.map((w) => w.workerId)).not.toContain("beating-worker");
    await store.close();
    await view.close();
  });

  it("claims what queued while every slot was taken as soon as a handler finishes, and claims nothing when one finishes in a pool that was not full", async () => {
    const store = postgresStore(TEST_PG_URL, { schema });
    let claims = 0;
    const countingStore = {
      ...store,
      claim(...args: Parameters<typeof store.claim>) {
        claims++;
        return store.claim(...args);
      },
    };
    const gates = new Map<string, Deferred<void>>();
    const started: string[] = [];
    const engine = new TaskEngine({
      store: countingStore,
      bus: localEventBus(),
      runner: async (task) => {
        started.push(task.id);
        const gate = deferred();
        gates.set(task.id, gate);
        await gate.promise;
        return { value: { ok: true } };
      },
      // A re-check far beyond the test: only events and finishing handlers make it claim.
      cluster: { workerId: "w2", concurrency: 2, recheckMs: 600_000 },
    });
    await engine.start();
    const caller = { owner: null };
    const create = () =>
      engine.create({
        owner: null,
        method: "tools/call",
        name: "t",
        request: {},
        origin: { sessionId: null, progressToken: null, accepts: [] },
        ttl: 60_000,
      });
    const completed = (id: string) => async () => (await engine.get(id, caller)).status === "completed";
    try {
      const first = await create();
      const second = await create();
      await until("two handlers", () => started.length === 2);
      // Both slots are taken: this one waits in the queue, its event heard by a full pool.
      const third = await create();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(started).toEqual([first.id, second.id]);
      gates.get(first.id)!.resolve();
      await until("the queued task's handler", () => started.length === 3);
      expect(started[2]).toBe(third.id);
      gates.get(second.id)!.resolve();
      gates.get(third.id)!.resolve();
      for (const task of [first, second, third]) await until(`task ${task.id}`, completed(task.id));
      await new Promise((resolve) => setTimeout(resolve, 50));

      // One task in a pool of two: its event claims it; its handler finishing claims nothing.
      const before = claims;
      const fourth = await create();
      await until("the fourth handler", () => gates.has(fourth.id));
      gates.get(fourth.id)!.resolve();
      await until("the fourth task", completed(fourth.id));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(claims).toBe(before + 1);
    } finally {
      for (const gate of gates.values()) gate.resolve();
      await engine.close();
      await store.close();
    }
  });

  it("wakes one worker: the first in the wake order takes new work alone, and a task queued while it is full is claimed by the next after its standby", async () => {
    const own = uniqueName("pool_wake");
    const stores = [postgresStore(TEST_PG_URL, { schema: own }), postgresStore(TEST_PG_URL, { schema: own })];
    const bus = localEventBus();
    const claims = { w1: 0, w2: 0 };
    const ranBy = new Map<string, string>();
    const gates = new Map<string, Deferred<void>>();
    const engine = (workerId: "w1" | "w2", store: (typeof stores)[number]) => {
      const countingStore = {
        ...store,
        claim(...args: Parameters<typeof store.claim>) {
          claims[workerId]++;
          return store.claim(...args);
        },
      };
      return new TaskEngine({
        store: countingStore,
        bus,
        runner: async (task) => {
          ranBy.set(task.id, workerId);
          const gate = deferred();
          gates.set(task.id, gate);
          await gate.promise;
          return { value: { ok: true } };
        },
        // Only events, standbys and finishing handlers make them claim. The standby is long
        // enough that a task the first worker runs at once ends within it on a loaded machine.
        cluster: { workerId, concurrency: 1, recheckMs: 600_000, standbyMs: 400 },
      });
    };
    const first = engine("w1", stores[0]!);
    const second = engine("w2", stores[1]!);
    try {
      await first.start();
      // Started later: second in the wake order (oldest start first).
      await new Promise((resolve) => setTimeout(resolve, 20));
      await second.start();
      await until("both workers' heartbeats", async () => (await stores[0]!.clusterView(Date.now())).workers.length === 2);
      // The second worker's first beat has answered its place.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const create = () =>
        first.create({
          owner: null,
          method: "tools/call",
          name: "t",
          request: {},
          origin: { sessionId: null, progressToken: null, accepts: [] },
          ttl: 60_000,
        });

      // One task at a time: the first worker claims each at once; the second, hearing each end
      // before its standby, never claims (beyond the claim each pool makes as it starts).
      const secondsClaims = claims.w2;
      for (let i = 0; i < 5; i++) {
        const task = await create();
        await until(`task ${i}'s handler`, () => gates.has(task.id));
        expect(ranBy.get(task.id)).toBe("w1");
        gates.get(task.id)!.resolve();
        await until(`task ${i} to end`, async () => (await first.get(task.id, { owner: null })).status === "completed");
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(claims.w2).toBe(secondsClaims);

      // The first worker is full: the next task goes to the second one, one standby later.
      const long = await create();
      await until("the long task's handler", () => gates.has(long.id));
      expect(ranBy.get(long.id)).toBe("w1");
      const createdAt = Date.now();
      const next = await create();
      await until("the next task's handler", () => gates.has(next.id), 3000);
      expect(ranBy.get(next.id)).toBe("w2");
      // One standby (400 ms), not a lease (30 s) nor the safety re-check (600 s).
      expect(Date.now() - createdAt).toBeLessThan(2000);
    } finally {
      for (const gate of gates.values()) gate.resolve();
      await second.close();
      await first.close();
      for (const store of stores) await store.close();
      await pgQuery(`DROP SCHEMA IF EXISTS ${own} CASCADE`);
    }
  });
  it(
    "a standby running nothing listens on nothing, yet takes a task that waited a standby while the first worker was full — however far its listening standby had backed off — and hears its cancel at once",
    { timeout: 30_000 },
    async () => {
      const own = uniqueName("pool_dormant");
      const channel = `ch_${own}`;
      const stores = [postgresStore(TEST_PG_URL, { schema: own }), postgresStore(TEST_PG_URL, { schema: own })];
      const buses = stores.map(() =>
        pgEventBus({ connectionString: TEST_PG_URL, channel, overflowTable: tablesOf(own).events, storeOnSameDatabase: true }),
      );
      const ranBy = new Map<string, string>();
      const gates = new Map<string, Deferred<void>>();
      const aborted = new Map<string, number>();
      const emptyClaims = { w1: 0, w2: 0 };
      const counted = (workerId: "w1" | "w2", store: (typeof stores)[number]) => ({
        ...store,
        async claim(...args: Parameters<typeof store.claim>) {
          const claimed = await store.claim(...args);
          if (claimed.length === 0) emptyClaims[workerId]++;
          return claimed;
        },
      });
      const engine = (workerId: "w1" | "w2", i: number, workerOnly = true) =>
        new TaskEngine({
          store: counted(workerId, stores[i]!),
          bus: buses[i]!,
          runner: async (task, ctx) => {
            ranBy.set(task.id, workerId);
            const gate = deferred();
            gates.set(task.id, gate);
            ctx.signal.addEventListener("abort", () => {
              aborted.set(task.id, Date.now());
              gate.resolve();
            });
            await gate.promise;
            return { value: { ok: true } };
          },
          // No safety re-check and a lease far longer than the test: only the standby's own look
          // at the queue can hand it the task, and only the cancel event can stop its handler.
          // The standby has a slot to spare while it runs one task, so that it can stand by then too.
          cluster: { workerId, concurrency: workerId === "w1" ? 1 : 2, recheckMs: 600_000, leaseMs: 600_000, standbyMs: 150, workerOnly },
        });
      const listeners = (): Promise<number> => listenersOn(channel);
      const first = engine("w1", 0);
      const second = engine("w2", 1);
      try {
        await first.start();
        await new Promise((resolve) => setTimeout(resolve, 20));
        await second.start();
        await Promise.all(buses.map((bus) => bus.ready));
        // Once its heartbeat says it is second, the standby stops listening: one LISTEN is left.
        await until("the standby to stop listening", async () => (await listeners()) === 1);
        const create = () =>
          first.create({
            owner: null,
            method: "tools/call",
            name: "t",
            request: {},
            origin: { sessionId: null, progressToken: null, accepts: [] },
            ttl: 600_000,
          });

        const busy = await create();
        await until("the first worker's handler", () => gates.has(busy.id));
        expect(ranBy.get(busy.id)).toBe("w1");
        const queuedAt = Date.now();
        const waiting = await create();
        await until("the standby to take the waiting task", () => gates.has(waiting.id), 3000);
        expect(ranBy.get(waiting.id)).toBe("w2");
        // Its looks, 150 ms apart backed off to 8 × 150 ms while it found nothing: not a lease
        // (600 s here) nor the safety re-check (600 s).
        expect(Date.now() - queuedAt).toBeLessThan(2500);
        // Running a handler, it listens again: its cancel arrives as an event, at once.
        expect(await listeners()).toBe(2);
        const cancelledAt = Date.now();
        await first.cancel(waiting.id, { owner: null });
        await until("the standby's handler to be aborted", () => aborted.has(waiting.id), 3000);
        expect(aborted.get(waiting.id)! - cancelledAt).toBeLessThan(1000);
        // Its handler done, it stops listening again.
        await until("the standby to stop listening again", async () => (await listeners()) === 1);

        // A standby whose claims backed off while it listened looks at the queue as often as a fresh one once dormant.
        const held = await create();
        await until("the standby to take another task", () => gates.has(held.id), 3000);
        expect(ranBy.get(held.id)).toBe("w2");
        gates.get(busy.id)!.resolve();
        const emptyBefore = emptyClaims.w2;
        for (const holdMs of [400, 700, 1000]) {
          // The first worker takes each at once; the listening standby, hearing nothing of it for
          // longer than its standby, claims and finds nothing: its standby doubles.
          const quiet = await create();
          await until("the first worker's handler", () => gates.has(quiet.id));
          expect(ranBy.get(quiet.id)).toBe("w1");
          await new Promise((resolve) => setTimeout(resolve, holdMs));
          gates.get(quiet.id)!.resolve();
          await until("the quiet task to end", async () => (await first.get(quiet.id, { owner: null })).status === "completed");
        }
        expect(emptyClaims.w2 - emptyBefore).toBeGreaterThanOrEqual(2);
        await first.cancel(held.id, { owner: null });
        await until("the standby to stop listening once more", async () => (await listeners()) === 1);
        // Its looks back off to 8 × 150 ms while nothing waits.
        await new Promise((resolve) => setTimeout(resolve, 2500));
        const full = await create();
        await until("the first worker's handler", () => gates.has(full.id));
        const lateAt = Date.now();
        const late = await create();
        await until("the standby to take the late task", () => gates.has(late.id), 12_000);
        expect(ranBy.get(late.id)).toBe("w2");
        // At most a look's interval (8 × 150 ms) and a standby (150 ms), and the claim.
        expect(Date.now() - lateAt).toBeLessThan(2500);
      } finally {
        for (const gate of gates.values()) gate.resolve();
        await second.close();
        await first.close();
        for (const bus of buses) await bus.close();
        for (const store of stores) await store.close();
        await pgQuery(`DROP SCHEMA IF EXISTS ${own} CASCADE`);
      }
    },
  );
  it("a standby on a node that also serves requests keeps listening: its waiters and streams need every event", async () => {
    const own = uniqueName("pool_front");
    const channel = `ch_${own}`;
    const stores = [postgresStore(TEST_PG_URL, { schema: own }), postgresStore(TEST_PG_URL, { schema: own })];
    const buses = stores.map(() =>
      pgEventBus({ connectionString: TEST_PG_URL, channel, overflowTable: tablesOf(own).events, storeOnSameDatabase: true }),
    );
    const engines = stores.map(
      (store, i) =>
        new TaskEngine({
          store,
          bus: buses[i]!,
          runner: async () => ({ value: { ok: true } }),
          cluster: { workerId: `n${i}`, concurrency: 1, standbyMs: 50 },
        }),
    );
    try {
      await engines[0]!.start();
      await new Promise((resolve) => setTimeout(resolve, 20));
      await engines[1]!.start();
      await Promise.all(buses.map((bus) => bus.ready));
      await until("both heartbeats", async () => (await stores[0]!.clusterView(Date.now())).workers.length === 2);
      // Well past the second node's first heartbeat answer and several standbys.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await listenersOn(channel)).toBe(2);
    } finally {
      for (const engine of engines) await engine.close();
      for (const bus of buses) await bus.close();
      for (const store of stores) await store.close();
      await pgQuery(`DROP SCHEMA IF EXISTS ${own} CASCADE`);
    }
  });
});
