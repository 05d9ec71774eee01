/**
 * A single node's dispatcher on a real SQLite file: handlers at once per node (`maxRunning`), per
 * owner and per tool; queued tasks wait in `working` with "queued (n ahead)", hold no handler, and
 * stay queued across a restart.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { localEventBus } from "../../src/events/local-event-bus.js";
import type { EngineOptions } from "../../src/runtime/engine-options.js";
import { TaskEngine } from "../../src/runtime/task-engine.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { TaskRecord } from "../../src/core/task.js";

const origin = { sessionId: null, progressToken: null, accepts: [] };
const dir = mkdtempSync(join(tmpdir(), "fair-dispatch-"));
const engines: TaskEngine[] = [];
afterEach(async () => {
  for (const e of engines.splice(0)) {
    await e.close();
    await e.store.close();
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A clock that moves on by a millisecond at each reading: FIFO within an owner is (createdAt, id)
 * order, and tasks created within one real millisecond would otherwise be ordered by their random ids.
 */
function steppingClock(): () => number {
  let t = Date.now();
  return () => ++t;
}

/** An engine whose handlers run until released, recording which run at once. */
function gatedEngine(file: string, options: Partial<EngineOptions>) {
  const running = new Set<string>();
  let peak = 0;
  const release: Array<() => void> = [];
  const engine = new TaskEngine({
    store: sqliteStore(join(dir, file)),
    bus: localEventBus(),
    runner: async (task: TaskRecord) => {
      running.add(task.id);
      peak = Math.max(peak, running.size);
      await new Promise<void>((resolve) => release.push(resolve));
      running.delete(task.id);
      return { value: { content: [] } };
    },
    now: steppingClock(),
    ...options,
  });
  engines.push(engine);
  return { engine, running, peak: () => peak, releaseAll: () => release.splice(0).forEach((r) => r()) };
}

const create = (e: TaskEngine, owner: string, name = "work") =>
  e.create({ owner, method: "tools/call", name, request: {}, origin, ttl: 60_000 });
const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

describe("the single node's fair dispatch", () => {
  it("runs at most maxRunning handlers; the rest wait in working as 'queued (n ahead)'", async () => {
    const g = gatedEngine("slots.db", { maxRunning: 2 });
    await g.engine.start();
    const tasks = [];
    for (let i = 0; i < 5; i++) tasks.push(await create(g.engine, "alice"));
    await settle();
    expect(g.running.size).toBe(2);
    const last = await g.engine.get(tasks[4]?.id, { owner: "alice" });
    expect(last).toMatchObject({ status: "working", statusMessage: "queued (2 ahead)" });
    g.releaseAll();
    await settle();
    expect(g.running.size).toBe(2);
    expect(g.peak()).toBe(2);
    expect((await g.engine.get(tasks[4]?.id, { owner: "alice" })).statusMessage).toBe("queued (0 ahead)");
  });

  it("a tool's concurrency caps its handlers across owners; other tools go on", async () => {
    const g = gatedEngine("tool.db", { concurrencyByName: () => ({ render: 1 }) });
    await g.engine.start();
    await create(g.engine, "alice", "render");
    await create(g.engine, "bob", "render");
    const other = await create(g.engine, "bob", "echo");
    await settle();
    expect(g.running.size).toBe(2);
    expect(g.running.has(other.id)).toBe(true);
  });

  it("queued tasks survive a restart as queued (never failed as interrupted) and start after it", async () => {
    const first = gatedEngine("restart.db", { maxRunning: 1 });
    await first.engine.start();
    const running = await create(first.engine, "alice");
    const queued = await create(first.engine, "alice");
    await settle();
    expect([...first.running]).toEqual([running.id]);
    await first.engine.close();
    await first.engine.store.close();
    engines.splice(engines.indexOf(first.engine), 1);
    const second = gatedEngine("restart.db", { maxRunning: 1 });
    await second.engine.start();
    await settle();
    // The interrupted one failed (its tool declares no recovery); the queued one now runs.
    expect((await second.engine.get(running.id, { owner: "alice" })).status).toBe("failed");
    expect([...second.running]).toEqual([queued.id]);
  });
});
