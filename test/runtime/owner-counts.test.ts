/**
 * The per-owner caps (T-TTL-7) read the store's counts at most once per interval while far from
 * a cap, and exactly at it.
 */
import { describe, expect, it } from "vitest";
import { newTaskId } from "../../src/core/task-id.js";
import { OwnerCounts } from "../../src/runtime/limits/owner-counts.js";
import { memoryStore } from "../../src/store/memory/memory-store.js";
import type { TaskStore } from "../../src/store/task-store.js";

function counting(store: TaskStore) {
  const reads = { n: 0 };
  const wrapped = {
    countActive: (owner: string | null) => (reads.n++, store.countActive(owner)),
    countStored: (owner: string | null) => store.countStored(owner),
  };
  return { wrapped, reads };
}

const create = (store: TaskStore, owner: string | null, now: number) =>
  store.create({
    id: newTaskId(),
    owner,
    method: "tools/call",
    name: "t",
    request: {},
    origin: { sessionId: null, progressToken: null, accepts: [] },
    createdAt: now,
    ttlMs: 60_000,
    pollIntervalMs: null,
    retryable: false,
  });

describe("owner counts", () => {
  it("admits exactly up to the active cap, counting creations made since the last read", async () => {
    const store = memoryStore();
    const counts = new OwnerCounts(store, { maxActive: 3, maxStored: 100, now: () => 0 });
    const verdicts = [];
    for (let i = 0; i < 5; i++) {
      const verdict = await counts.reserve("alice");
      if (verdict === null) {
        await create(store, "alice", Date.now());
        counts.settle("alice", true);
      }
      verdicts.push(verdict);
    }
    expect(verdicts).toEqual([null, null, null, "active_tasks", "active_tasks"]);
  });

  it("admits exactly up to the cap when reservations race", async () => {
    const store = memoryStore();
    const counts = new OwnerCounts(store, { maxActive: 100, maxStored: 4, now: () => 0 });
    const verdicts = await Promise.all(Array.from({ length: 10 }, () => counts.reserve(null)));
    expect(verdicts.filter((v) => v === null)).toHaveLength(4);
    expect(verdicts.filter((v) => v === "stored_tasks")).toHaveLength(6);
  });

  it("reads the store once per interval while far from the caps", async () => {
    const store = memoryStore();
    const { wrapped, reads } = counting(store);
    let now = 0;
    const counts = new OwnerCounts(wrapped, { maxActive: 1000, maxStored: 1000, refreshMs: 1000, now: () => now });
    for (let i = 0; i < 50; i++) {
      expect(await counts.reserve("alice")).toBeNull();
      counts.settle("alice", true);
    }
    expect(reads.n).toBe(1);
    now = 1000;
    await counts.reserve("alice");
    expect(reads.n).toBe(2);
  });

  it("reads the store again at the cap, so a finished or deleted task frees its place at once", async () => {
    const store = memoryStore();
    const counts = new OwnerCounts(store, { maxActive: 100, maxStored: 1, now: () => 0 });
    expect(await counts.reserve("alice")).toBeNull();
    const task = await create(store, "alice", Date.now());
    counts.settle("alice", true);
    expect(await counts.reserve("alice")).toBe("stored_tasks");
    await store.transition(task.id, ["working"], "completed", {
      outcome: { kind: "result", value: {} },
      statusMessage: null,
      now: Date.now(),
    });
    await store.deleteExpired(Number.MAX_SAFE_INTEGER, 10);
    expect(await store.get(task.id, { any: true })).toBeNull();
    expect(await counts.reserve("alice")).toBeNull();
  });

  it("admits no more than the cap when a creation is written while a read of the counts is under way", async () => {
    const store = memoryStore();
    // Counts taken when asked, answered only once released: a query that ran before a concurrent
    // insert committed, its answer still on the wire.
    let release: () => void = () => {};
    let hold = false;
    const snapshotting = {
      countActive: async (owner: string | null) => {
        const n = await store.countActive(owner);
        if (hold) await new Promise<void>((resolve) => (release = resolve));
        return n;
      },
      countStored: (owner: string | null) => store.countStored(owner),
    };
    const counts = new OwnerCounts(snapshotting, { maxActive: 1, maxStored: 100, now: () => 0 });
    expect(await counts.reserve("alice")).toBeNull(); // the first creation, about to be written
    hold = true;
    const second = counts.reserve("alice"); // at the cap: reads, and the store has nothing yet
    await new Promise((resolve) => setImmediate(resolve));
    await create(store, "alice", Date.now());
    counts.settle("alice", true);
    release();
    expect(await second).toBe("active_tasks");
  });

  it("gives back a reservation whose creation failed", async () => {
    const store = memoryStore();
    const counts = new OwnerCounts(store, { maxActive: 1, maxStored: 10, now: () => 0 });
    expect(await counts.reserve("bob")).toBeNull();
    counts.settle("bob", false);
    expect(await counts.reserve("bob")).toBeNull();
  });
});
