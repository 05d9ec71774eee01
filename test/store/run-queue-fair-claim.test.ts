/**
 * The single node's fair claim (memory and SQLite stores) without tool caps: owners take turns by
 * their rank in their own queue plus their running handlers, oldest first within a score, and
 * the per-owner cap drops the higher scores. SQLite ranks only each owner's oldest `limit` queued
 * tasks there, so a claim costs the same however long the queue; the picks must be the rule's.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { memoryStore } from "../../src/store/memory/memory-store.js";
import { NO_CAPS, type RunQueueStore } from "../../src/store/run-queue.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { TaskStore } from "../../src/store/task-store.js";
import { newTask } from "../../src/testing/store-contract.js";

const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-fair-claim-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const stores: Array<[string, () => TaskStore & RunQueueStore]> = [
  ["memory", () => memoryStore()],
  ["SQLite file", () => sqliteStore(join(dir, `${Math.random().toString(36).slice(2)}.db`))],
];

describe.each(stores)("fair claim without tool caps on the %s store", (_name, open) => {
  let store: TaskStore & RunQueueStore;
  afterEach(async () => {
    await store.close();
  });

  /** alice has 2 handlers running and 20 queued (created 10…29); bob 3 queued (created 30…32). */
  async function queueOfTwoOwners(): Promise<{ alice: string[]; bob: string[] }> {
    store = open();
    await store.create(newTask({ id: "a-running-1", owner: "alice", createdAt: 1 }));
    await store.create(newTask({ id: "a-running-2", owner: "alice", createdAt: 2 }));
    expect(await store.claimRunnable(2, 5, NO_CAPS)).toHaveLength(2);
    const alice: string[] = [];
    const bob: string[] = [];
    for (let i = 0; i < 20; i++) alice.push((await store.create(newTask({ id: `a-${i}`, owner: "alice", createdAt: 10 + i }))).id);
    for (let i = 0; i < 3; i++) bob.push((await store.create(newTask({ id: `b-${i}`, owner: "bob", createdAt: 30 + i }))).id);
    return { alice, bob };
  }

  it("takes the fair order's first tasks from a queue longer than the claim", async () => {
    const { alice, bob } = await queueOfTwoOwners();
    // Scores: bob 1, 2, 3; alice 3 (two running), 4, …; a tie goes to the older task.
    const first = (await store.claimRunnable(4, 50, NO_CAPS)).map((t) => t.id).sort();
    expect(first).toEqual([alice[0], bob[0], bob[1], bob[2]].sort());
    const next = (await store.claimRunnable(3, 51, NO_CAPS)).map((t) => t.id).sort();
    expect(next).toEqual([alice[1], alice[2], alice[3]].sort());
  });

  it("leaves an owner's tasks over the per-owner cap queued", async () => {
    const { bob } = await queueOfTwoOwners();
    const picked = (await store.claimRunnable(4, 50, { perOwner: 2, perName: {} })).map((t) => t.id).sort();
    expect(picked).toEqual([bob[0], bob[1]].sort());
  });
});
