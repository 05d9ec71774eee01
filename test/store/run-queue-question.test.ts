/**
 * The single node's run queue (memory and SQLite stores): a task in input_required has started —
 * only a handler asks questions — so it is among the started tasks recovery looks at, and its
 * answer puts it back to working without queueing it for a second handler.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { allowedSources } from "../../src/core/task-status.js";
import { memoryStore } from "../../src/store/memory/memory-store.js";
import { NO_CAPS, type RunQueueStore } from "../../src/store/run-queue.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { TaskStore } from "../../src/store/task-store.js";
import { newTask } from "../../src/testing/store-contract.js";

const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-run-queue-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const stores: Array<[string, () => TaskStore & RunQueueStore]> = [
  ["memory", () => memoryStore()],
  ["SQLite file", () => sqliteStore(join(dir, `${Math.random().toString(36).slice(2)}.db`))],
];

describe.each(stores)("run queue on the %s store", (_name, open) => {
  let store: TaskStore & RunQueueStore;
  afterEach(async () => {
    await store.close();
  });

  it("a task moved to input_required without a claim counts as started, and its answer does not queue it again", async () => {
    store = open();
    const asked = await store.create(newTask({ createdAt: 1_000 }));
    const queued = await store.create(newTask({ createdAt: 1_001 }));
    await store.transition(asked.id, allowedSources("input_required"), "input_required", { now: 1_010 });
    expect((await store.startedTasks(10)).map((t) => t.id)).toEqual([asked.id]);
    expect((await store.activeTasks(10)).map((t) => t.id)).toEqual([asked.id, queued.id]);

    await store.transition(asked.id, allowedSources("working"), "working", { now: 1_020 });
    expect((await store.claimRunnable(10, 1_030, NO_CAPS)).map((t) => t.id)).toEqual([queued.id]);
    expect((await store.startedTasks(10)).map((t) => t.id)).toEqual([asked.id, queued.id]);
  });
});
