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
import { isWaitStore, type WaitStore } from "../store/wait-store.js";

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

    describe("waiting tasks hold no slot (durable waits)", () => {
      const waits = (): TaskStore & WaitStore & QueueView => {
        const store = view();
        if (!isWaitStore(store)) throw new Error("this store does not implement WaitStore");
        return store;
      };

      /** Claims `id` (it must be the only queued task), gives it a timer and puts it in `mode`. */
      async function waiting(id: string, mode: "parked" | "memory"): Promise<void> {
        expect(await claim(10)).toEqual([id]);
        const store = waits();
        await store.registerWait({
          taskId: id,
          key: "$sleep#1",
          kind: "timer",
          owner: "A",
          eventName: null,
          dueAt: T0 + 1_000,
          afterSeq: 0,
          since: T0,
          createdAt: T0 + 100,
        });
        expect(await store.setWaitMode(id, mode)).toBe(true);
      }

      /** Whether the store would recover `id` after a restart (single node) or reap its lease (cluster). */
      async function held(id: string): Promise<boolean> {
        const store = current();
        if (isRunQueueStore(store)) return (await store.startedTasks(100)).some((t) => t.id === id);
        if (isLeaseStore(store)) {
          const late = (await store.expiredLeases(T0 + 10_000_000, 100)).some((e) => e.task.id === id);
          const leased = (await store.heldLeases("worker-1", T0 + 100)).some((t) => t.id === id);
          return late || leased;
        }
        throw new Error("this store keeps no queue");
      }

      it("a parked task is neither claimed, queued, recovered, leased nor running for the caps", async () => {
        const a1 = await queue("A");
        await waiting(a1, "parked");
        expect(await held(a1)).toBe(false);
        const a2 = await queue("A");
        expect(await view().queuedAhead(a1)).toBeNull();
        expect(await view().queuedAhead(a2)).toBe(0);
        expect(await view().countQueued("A")).toBe(1);
        expect(await view().queueDepths()).toEqual([{ owner: "A", name: "slow-tool", queued: 1 }]);
        expect(await claim(10, { perOwner: 1, perName: { "slow-tool": 1 } })).toEqual([a2]);
        expect(await claim(10)).toEqual([]);
        expect((await current().activeTasks(10)).map((t) => t.id)).toContain(a1);
      });

      it("a woken parked task is queued again and claimed like a new one", async () => {
        const a1 = await queue("A");
        await waiting(a1, "parked");
        expect(await waits().fireDue(T0 + 1_000, 10)).toEqual([{ taskId: a1, parked: true }]);
        expect(await view().queuedAhead(a1)).toBe(0);
        expect(await claim(10)).toEqual([a1]);
        expect(await held(a1)).toBe(true);
      });

      it("a parked question answered (wakeAnswered) is claimed again", async () => {
        const a1 = await queue("A");
        expect(await claim(10)).toEqual([a1]);
        const store = waits();
        await store.transition(a1, ["working"], "input_required", { now: T0 + 101 });
        await store.enqueueInput({ id: "q1", taskId: a1, method: "elicitation/create", params: {}, createdAt: T0 + 101 });
        expect(await store.setWaitMode(a1, "parked")).toBe(true);
        expect(await held(a1)).toBe(false);
        await store.answerInput(a1, "q1", { kind: "result", value: {} });
        expect(await store.wakeAnswered(a1, T0 + 102)).toBe(true);
        expect(await claim(10)).toEqual([a1]);
      });

      it("a task waiting in memory keeps its start (or lease) but counts as running for nobody", async () => {
        const a1 = await queue("A", { name: "x" });
        await waiting(a1, "memory");
        expect(await held(a1)).toBe(true);
        expect(await view().queuedAhead(a1)).toBeNull();
        const a2 = await queue("A", { name: "x" });
        expect(await claim(10, { perOwner: 1, perName: { x: 1 } })).toEqual([a2]);
        expect(await waits().setWaitMode(a1, null)).toBe(true);
        const a3 = await queue("A", { name: "x" });
        expect(await claim(10, { perOwner: 3, perName: { x: 2 } })).toEqual([]);
        expect(await view().queuedAhead(a3)).toBe(0);
      });
    });
  });
}
