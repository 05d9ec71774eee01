/**
 * The fair queue every store keeps (run-queue.ts): the order claims take queued tasks in, the caps
 * they respect, and what the queue shows of itself. Part of {@link storeContract}: a single-node
 * store claims through `claimRunnable`, a cluster store through its lease `claim`, and both give
 * the same order.
 */
import { describe, expect, it } from "vitest";
import { ACTIVE_STATUSES } from "../core/task-status.js";
import type { NewTask, TaskRecord } from "../core/task.js";
import { isLeaseStore } from "../store/lease-store.js";
import { isQueueView, isRunQueueStore, NO_CAPS, type ClaimCaps, type QueueView } from "../store/run-queue.js";
import type { TaskStore } from "../store/task-store.js";

const T0 = 1_700_000_000_000;

/** `current`: the store under test; `newTask`: a valid new task with these fields. */
export function queueContract(current: () => TaskStore, newTask: (overrides: Partial<NewTask>) => NewTask): void {
  describe("the fair queue (round-robin over owners, FIFO within one, caps)", () => {
    const view = (): TaskStore & QueueView => {
      const store = current();
      if (!isQueueView(store)) throw new Error("this store does not implement QueueView");
      return store;
    };

    /** Starts up to `limit` queued tasks the way this store's runtime does; their ids in creation order. */
    async function claim(limit: number, caps: ClaimCaps = NO_CAPS): Promise<string[]> {
      const store = current();
      let claimed: TaskRecord[];
      if (isRunQueueStore(store)) claimed = await store.claimRunnable(limit, T0 + 100, caps);
      else if (isLeaseStore(store)) claimed = await store.claim("worker-1", limit, 30_000, T0 + 100, undefined, caps);
      else throw new Error("this store keeps no queue");
      return claimed.sort((a, b) => a.createdAt - b.createdAt).map((task) => task.id);
    }

    let clock = 0;
    /** Queues a task of `owner`, each one created after the one before. */
    const queue = async (owner: string | null, overrides: Partial<NewTask> = {}): Promise<string> =>
      (await current().create(newTask({ owner, createdAt: T0 + clock++, ...overrides }))).id;

    const finish = async (id: string): Promise<void> => {
      const done = await current().transition(id, ACTIVE_STATUSES, "completed", { outcome: { kind: "result", value: {} }, now: T0 + 200 });
      expect(done?.status).toBe("completed");
    };

    it("takes one task of each owner in turn, each owner's own in creation order: A1 A2 A3 B1 → A1 B1 A2 A3", async () => {
      const [a1, a2, a3] = [await queue("A"), await queue("A"), await queue("A")];
      const b1 = await queue("B");
      const order: string[] = [];
      for (let i = 0; i < 4; i++) order.push(...(await claim(1)));
      expect(order).toEqual([a1, b1, a2, a3]);
      expect(await claim(1)).toEqual([]);
    });

    it("a claim with room for every queued task takes them all; one with less room takes the fair head", async () => {
      const [a1, a2] = [await queue("A"), await queue("A")];
      const b1 = await queue("B");
      expect(await claim(2)).toEqual([a1, b1]);
      const a3 = await queue("A");
      expect(await claim(2)).toEqual([a2, a3]);
      expect(await claim(5)).toEqual([]);
    });

    it("one claim of two takes the head of each owner's queue", async () => {
      const a1 = await queue("A");
      await queue("A");
      await queue("A");
      const b1 = await queue("B");
      expect(await claim(2)).toEqual([a1, b1]);
    });

    it("an owner with handlers running waits behind one without, whatever their tasks' ages", async () => {
      const [a1, a2] = [await queue("A"), await queue("A")];
      expect(await claim(2)).toEqual([a1, a2]);
      const a3 = await queue("A");
      const b1 = await queue("B");
      expect(await claim(1)).toEqual([b1]);
      expect(await claim(1)).toEqual([a3]);
    });

    it("tasks without an owner are one caller among the others", async () => {
      const [n1, n2] = [await queue(null), await queue(null)];
      const a1 = await queue("A");
      const order: string[] = [];
      for (let i = 0; i < 3; i++) order.push(...(await claim(1)));
      expect(order).toEqual([n1, a1, n2]);
    });

    it("a claim never puts an owner over its cap; a slot freed by its own task's end lets the next start", async () => {
      const [a1, a2, a3] = [await queue("A"), await queue("A"), await queue("A")];
      const caps = { perOwner: 2, perName: {} };
      expect(await claim(10, caps)).toEqual([a1, a2]);
      expect(await claim(10, caps)).toEqual([]);
      await finish(a1);
      expect(await claim(10, caps)).toEqual([a3]);
    });

    it("a claim never puts a tool over its cap, and a tool at its cap does not hold up its owner's other tools", async () => {
      const x1 = await queue("A", { name: "x" });
      const x2 = await queue("A", { name: "x" });
      const y1 = await queue("A", { name: "y" });
      const caps = { perOwner: null, perName: { x: 1 } };
      expect(await claim(10, caps)).toEqual([x1, y1]);
      expect(await claim(10, caps)).toEqual([]);
      await finish(x1);
      expect(await claim(10, caps)).toEqual([x2]);
    });

    it("a task that ended while queued (cancelled) is never started", async () => {
      const a1 = await queue("A");
      const a2 = await queue("A");
      await current().transition(a1, ["working"], "cancelled", { now: T0 + 50 });
      expect(await claim(10)).toEqual([a2]);
    });

    it("queuedAhead: how many of the same owner's queued tasks start before it; null once started or ended", async () => {
      const [a1, a2, a3] = [await queue("A"), await queue("A"), await queue("A")];
      await queue("B");
      expect(await view().queuedAhead(a3)).toBe(2);
      expect(await view().queuedAhead(a1)).toBe(0);
      expect(await claim(1)).toEqual([a1]);
      expect(await view().queuedAhead(a1)).toBeNull();
      expect(await view().queuedAhead(a3)).toBe(1);
      await current().transition(a2, ["working"], "cancelled", { now: T0 + 50 });
      expect(await view().queuedAhead(a2)).toBeNull();
      expect(await view().queuedAhead(a3)).toBe(0);
      expect(await view().queuedAhead("no-such-task")).toBeNull();
    });

    it("countQueued and queueDepths count only tasks no handler has started, per owner and tool", async () => {
      await queue("A", { name: "x" });
      await queue("A", { name: "x" });
      await queue("A", { name: "y" });
      await queue(null, { name: "x" });
      expect(await claim(1)).toHaveLength(1);
      expect(await view().countQueued("A")).toBe(2);
      expect(await view().countQueued(null)).toBe(1);
      expect(await view().countQueued("nobody")).toBe(0);
      const depths = (await view().queueDepths()).sort((a, b) => `${a.owner}/${a.name}`.localeCompare(`${b.owner}/${b.name}`));
      expect(depths).toEqual([
        { owner: "A", name: "x", queued: 1 },
        { owner: "A", name: "y", queued: 1 },
        { owner: null, name: "x", queued: 1 },
      ]);
    });
  });
}
