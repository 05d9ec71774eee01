/**
 * Draining an engine: new tasks are refused with a retryable error, running
 * handlers get the grace period, and what still runs at its end is handed back — left active on
 * a single node (for the next start's recovery), queued again for another worker in a cluster —
 * never failed. Real stores: a SQLite file, and PostgreSQL for the cluster case.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { RpcCode } from "../../src/core/errors.js";
import type { TaskRecord } from "../../src/core/task.js";
import { localEventBus } from "../../src/events/local-event-bus.js";
import type { TaskContext } from "../../src/runtime/task-context.js";
import { TaskEngine } from "../../src/runtime/task-engine.js";
import { postgresStore } from "../../src/store/postgres/postgres-store.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { TaskStore } from "../../src/store/task-store.js";
import { deferred, type Deferred } from "../support/conformance.js";
import { freshSchemas, TEST_PG_URL } from "../support/postgres.js";

const origin = { sessionId: null, progressToken: null, accepts: [] };
const caller = { owner: null };
const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-drain-"));
const schemas = freshSchemas("drain");
let files = 0;

const engines: TaskEngine[] = [];
const stores: TaskStore[] = [];
afterEach(async () => {
  for (const engine of engines.splice(0)) await engine.close();
  for (const store of stores.splice(0)) await store.close();
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await schemas.dropAll();
});

/**
 * A handler that waits until the test lets it go (`release`), or until its signal aborts: then
 * it throws — or, with `returnOnAbort`, returns as if it had finished — with the abort's reason.
 */
function gatedRunner(options: { returnOnAbort?: boolean } = {}) {
  const started = new Map<string, Deferred<void>>();
  const release = new Map<string, () => void>();
  const reasons = new Map<string, unknown>();
  const runner = async (task: TaskRecord, ctx: TaskContext) => {
    await new Promise<void>((resolve, reject) => {
      release.set(task.id, resolve);
      ctx.signal.addEventListener("abort", () => {
        reasons.set(task.id, ctx.signal.reason);
        if (options.returnOnAbort) resolve();
        else reject(new Error(`aborted: ${String(ctx.signal.reason)}`));
      });
      started.get(task.id)?.resolve();
    });
    return { value: { content: [{ type: "text", text: "done" }] } };
  };
  /** Resolves once the task's handler runs. */
  const running = async (id: string): Promise<void> => {
    if (release.has(id)) return;
    const d = deferred<void>();
    started.set(id, d);
    if (release.has(id)) return;
    await d.promise;
  };
  return { runner, running, release: (id: string) => release.get(id)?.(), reasons };
}

async function singleNode(runner: ReturnType<typeof gatedRunner>["runner"], path = join(dir, `t-${++files}.db`)) {
  const store = sqliteStore(path);
  stores.push(store);
  const engine = new TaskEngine({ store, bus: localEventBus(), runner });
  engines.push(engine);
  await engine.start();
  return { engine, store, path };
}

const create = (engine: TaskEngine, retryable = false) =>
  engine.create({ ...caller, method: "tools/call", name: "gated", request: {}, origin, ttl: 600_000, retryable });

describe("drain on a single node (SQLite)", () => {
  it("a handler that finishes within the grace period completes as usual", async () => {
    const gate = gatedRunner();
    const { engine } = await singleNode(gate.runner);
    const task = await create(engine);
    await gate.running(task.id);
    const drained = engine.drain(60_000);
    gate.release(task.id);
    expect(await drained).toEqual({ finished: [task.id], handedBack: [] });
    expect((await engine.get(task.id, caller)).status).toBe("completed");
  });

  it("a handler still running when the grace period ends is aborted with reason 'drain' and its task left working, not failed", async () => {
    const gate = gatedRunner();
    const { engine, store } = await singleNode(gate.runner);
    const task = await create(engine);
    await gate.running(task.id);
    expect(await engine.drain(50)).toEqual({ finished: [], handedBack: [task.id] });
    expect(gate.reasons.get(task.id)).toBe("drain");
    await engine.close();
    // close() after the drain fails nothing either: the task waits in the file for the next start.
    expect(await store.get(task.id, { any: true })).toMatchObject({ status: "working", outcome: null });
  });

  it("what a drained handler returns after the abort is not stored: the task stays active", async () => {
    const gate = gatedRunner({ returnOnAbort: true });
    const { engine, store } = await singleNode(gate.runner);
    const task = await create(engine);
    await gate.running(task.id);
    await engine.drain(20);
    await engine.close();
    expect(await store.get(task.id, { any: true })).toMatchObject({ status: "working", outcome: null });
  });

  it("the next start on the file picks a drained task up (a retryable one runs again to completion)", async () => {
    const first = gatedRunner();
    const { engine, store, path } = await singleNode(first.runner);
    const task = await create(engine, true);
    await first.running(task.id);
    await engine.drain(20);
    await engine.close();
    await store.close();

    const second = gatedRunner();
    const next = await singleNode(second.runner, path);
    await second.running(task.id);
    second.release(task.id);
    expect((await next.engine.awaitOutcome(task.id, caller, new AbortController().signal)).status).toBe("completed");
  });

  it("refuses new tasks while draining with -32003 and data.reason 'draining', and still answers reads and cancels", async () => {
    const gate = gatedRunner();
    const { engine } = await singleNode(gate.runner);
    const task = await create(engine);
    await gate.running(task.id);
    const drained = engine.drain(60_000);
    expect(engine.draining).toBe(true);
    await expect(create(engine)).rejects.toMatchObject({ kind: "unavailable", code: RpcCode.Unavailable, data: { reason: "draining" } });
    expect((await engine.get(task.id, caller)).status).toBe("working");
    expect((await engine.cancel(task.id, caller)).status).toBe("cancelled");
    expect(await drained).toEqual({ finished: [task.id], handedBack: [] });
  });

  it("the refusal of a new task while draining says to retry once the server has restarted: no other server shares a single node's store", async () => {
    const gate = gatedRunner();
    const { engine } = await singleNode(gate.runner);
    void engine.drain(0);
    await expect(create(engine)).rejects.toMatchObject({
      message: "The server is shutting down and takes no new tasks; retry once the server has restarted",
    });
  });
});

describe("drain of a cluster worker (PostgreSQL)", () => {
  it("the refusal of a new task while draining says another server will take the request", async () => {
    const store = postgresStore(TEST_PG_URL, { schema: schemas.next() });
    stores.push(store);
    const engine = new TaskEngine({
      store,
      bus: localEventBus(),
      runner: gatedRunner().runner,
      cluster: { workerId: "a", concurrency: 1, recheckMs: 50 },
    });
    engines.push(engine);
    await engine.start();
    void engine.drain(0);
    await expect(create(engine)).rejects.toMatchObject({
      message: "The server is shutting down and takes no new tasks; retry, another server will take the request",
    });
  });

  it("hands a task still running back to the queue at once: another worker claims it and completes it, nothing failed", async () => {
    const schema = schemas.next();
    const storeA = postgresStore(TEST_PG_URL, { schema });
    const storeB = postgresStore(TEST_PG_URL, { schema });
    stores.push(storeA, storeB);
    const bus = localEventBus();
    const a = gatedRunner();
    const b = gatedRunner();
    // One worker at first, so the task is certainly A's.
    const workerA = new TaskEngine({ store: storeA, bus, runner: a.runner, cluster: { workerId: "a", concurrency: 1, recheckMs: 50 } });
    engines.push(workerA);
    await workerA.start();
    const task = await create(workerA);
    await a.running(task.id);

    const workerB = new TaskEngine({ store: storeB, bus, runner: b.runner, cluster: { workerId: "b", concurrency: 1, recheckMs: 50 } });
    engines.push(workerB);
    await workerB.start();
    expect(await workerA.drain(20)).toEqual({ finished: [], handedBack: [task.id] });
    expect(a.reasons.get(task.id)).toBe("drain");

    await b.running(task.id);
    b.release(task.id);
    const done = await workerB.awaitOutcome(task.id, caller, new AbortController().signal);
    expect(done.status).toBe("completed");
    const timeline = (await storeB.history(task.id)).map((c) => c.status);
    expect(timeline).not.toContain("failed");
    expect(timeline).toEqual(["working", "working", "completed"]);
  });
});
