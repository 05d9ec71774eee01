/**
 * The contract of {@link WaitStore} (durable waits: timers, events, parked tasks), part of
 * {@link storeContract}: every store runs it unchanged. Concurrency cases run their callers
 * through one store at once; a pool-backed store serves them on separate connections, so the
 * database's locking is what is tested.
 */
import { describe, expect, it } from "vitest";
import { allowedSources, TERMINAL_STATUSES } from "../core/task-status.js";
import type { NewTask, TaskRecord } from "../core/task.js";
import { isCheckpointStore, type CheckpointStore } from "../store/checkpoint-store.js";
import type { TaskStore } from "../store/task-store.js";
import { isWaitStore, type WaitOutcome, type WaitRecord, type WaitStore } from "../store/wait-store.js";

const T0 = 1_700_000_000_000;

type Waiting = TaskStore & WaitStore & CheckpointStore;

/** `current`: the store under test; `newTask`: a valid new task with these fields. */
export function waitContract(current: () => TaskStore, newTask: (overrides: Partial<NewTask>) => NewTask): void {
  describe("durable waits (timers, events, parked tasks)", () => {
    /** Every built-in store keeps waits; a store without them cannot park a task. */
    const store = (): Waiting => {
      const s = current();
      if (!isWaitStore(s) || !isCheckpointStore(s)) throw new Error("this store does not implement WaitStore and CheckpointStore");
      return s;
    };

    const task = async (overrides: Partial<NewTask> = {}): Promise<TaskRecord> => store().create(newTask({ owner: "alice", ...overrides }));

    const timer = (t: Pick<TaskRecord, "id" | "owner" | "createdAt">, key: string, dueAt: number, createdAt = T0 + 1): WaitRecord => ({
      taskId: t.id,
      key,
      kind: "timer",
      owner: t.owner,
      eventName: null,
      dueAt,
      afterSeq: 0,
      since: t.createdAt,
      createdAt,
    });

    const eventWait = (t: TaskRecord, key: string, name: string, fields: Partial<WaitRecord> = {}): WaitRecord => ({
      taskId: t.id,
      key,
      kind: "event",
      owner: t.owner,
      eventName: name,
      dueAt: null,
      afterSeq: 0,
      since: t.createdAt,
      createdAt: T0 + 1,
      ...fields,
    });

    const emit = (owner: string | null, name: string, payload: unknown, now = T0 + 10) => store().emitEvent({ owner, name, payload, now });

    /** The outcome kept under a wait's checkpoint, in the stored form the run journal reads (`{ value }`). */
    const kept = async (taskId: string, key: string): Promise<unknown> =>
      (await store().checkpoints(taskId)).find((c) => c.name === key)?.value ?? null;

    const stray = { workerId: "w-gone", generation: 1, attempt: 1 };

    describe("registerWait and waits", () => {
      it("keeps timer and event waits, the task's own, oldest first", async () => {
        const a = await task();
        const b = await task();
        const nap = timer(a, "$sleep#1", T0 + 1_000, T0 + 2);
        const approval = eventWait(a, "$event#1", "approval", { dueAt: T0 + 5_000, afterSeq: 3, createdAt: T0 + 1 });
        expect(await store().registerWait(nap)).toBeNull();
        expect(await store().registerWait(approval)).toBeNull();
        expect(await store().registerWait(timer(b, "$sleep#1", T0 + 9))).toBeNull();
        expect(await store().waits(a.id)).toEqual([approval, nap]);
        expect(await store().waits("no-such-task")).toEqual([]);
      });

      it("a key registered again keeps the first registration (a replay waits again)", async () => {
        const a = await task();
        const first = timer(a, "$sleep#1", T0 + 1_000);
        await store().registerWait(first);
        expect(await store().registerWait({ ...first, dueAt: T0 + 99_000 })).toBeNull();
        expect(await store().waits(a.id)).toEqual([first]);
      });

      it("refuses a wait of an unknown task (unknown_task)", async () => {
        await expect(store().registerWait(timer(newTask({}), "$sleep#1", T0 + 1_000))).rejects.toMatchObject({ reason: "unknown_task" });
        expect(await store().nextDue()).toBeNull();
      });

      it("with a claim that is not the task's current one, registers nothing (claim_lost)", async () => {
        const a = await task();
        await expect(store().registerWait(timer(a, "$sleep#1", T0 + 1_000), stray)).rejects.toMatchObject({ reason: "claim_lost" });
        expect(await store().waits(a.id)).toEqual([]);
      });

      it("a key whose outcome is kept already answers that outcome and registers nothing", async () => {
        const a = await task();
        await store().registerWait(eventWait(a, "$event#1", "go"));
        const { seq } = await emit("alice", "go", { n: 1 });
        const again = await store().registerWait(eventWait(a, "$event#1", "go"));
        expect(again).toEqual({ fired: "event", at: T0 + 10, seq, payload: { n: 1 } });
        expect(await store().waits(a.id)).toEqual([]);
      });
    });

    describe("no lost wake-up", () => {
      it("an event stored before the wait satisfies it at registration: returned, kept as the checkpoint, nothing registered", async () => {
        const a = await task();
        const { seq, woken } = await emit("alice", "approval", { approved: true, by: "bob" });
        expect(woken).toEqual([]);
        const outcome = await store().registerWait(eventWait(a, "$event#1", "approval"));
        const expected: WaitOutcome = { fired: "event", at: T0 + 10, seq, payload: { approved: true, by: "bob" } };
        expect(outcome).toEqual(expected);
        expect(await kept(a.id, "$event#1")).toEqual({ value: expected });
        expect(await store().waits(a.id)).toEqual([]);
      });

      it("an event emitted after the wait satisfies it at emission: outcome kept, wait removed, task woken", async () => {
        const a = await task();
        const b = await task({ owner: "alice" });
        await store().registerWait(eventWait(a, "$event#1", "approval"));
        await store().registerWait(eventWait(b, "$event#2", "approval"));
        const { seq, woken } = await emit("alice", "approval", { approved: false }, T0 + 20);
        expect(woken.sort((x, y) => x.taskId.localeCompare(y.taskId))).toEqual(
          [a.id, b.id].sort().map((taskId) => ({ taskId, parked: false })),
        );
        expect(await kept(a.id, "$event#1")).toEqual({ value: { fired: "event", at: T0 + 20, seq, payload: { approved: false } } });
        expect(await kept(b.id, "$event#2")).toEqual({ value: { fired: "event", at: T0 + 20, seq, payload: { approved: false } } });
        expect(await store().waits(a.id)).toEqual([]);
        expect((await emit("alice", "approval", {}, T0 + 30)).woken).toEqual([]);
      });

      it("event sequence numbers increase with every event stored", async () => {
        const first = await emit("alice", "x", 1);
        const second = await emit("bob", "y", 2);
        const third = await emit(null, "x", 3);
        expect(second.seq).toBeGreaterThan(first.seq);
        expect(third.seq).toBeGreaterThan(second.seq);
      });

      it("afterSeq: only events stored after it match, and the oldest of those is taken", async () => {
        const a = await task();
        const one = await emit("alice", "tick", 1);
        const two = await emit("alice", "tick", 2);
        await emit("alice", "tick", 3);
        expect(await store().registerWait(eventWait(a, "$event#1", "tick", { afterSeq: one.seq }))).toEqual({
          fired: "event",
          at: T0 + 10,
          seq: two.seq,
          payload: 2,
        });
      });

      it("since: an event emitted before the wait's since does not match", async () => {
        const a = await task({ createdAt: T0 + 100 });
        await emit("alice", "tick", "old", T0 + 99);
        expect(await store().registerWait(eventWait(a, "$event#1", "tick", { since: T0 + 100 }))).toBeNull();
        const fresh = await emit("alice", "tick", "new", T0 + 100);
        expect(fresh.woken.map((w) => w.taskId)).toEqual([a.id]);
      });

      it("another owner's event never matches; a null owner is its own owner", async () => {
        const mine = await task({ owner: "alice" });
        const nobodys = await task({ owner: null });
        await emit("mallory", "approval", { approved: true });
        await emit(null, "other", {});
        expect(await store().registerWait(eventWait(mine, "$event#1", "approval"))).toBeNull();
        expect(await store().registerWait(eventWait(nobodys, "$event#1", "approval"))).toBeNull();
        expect((await emit("mallory", "approval", { approved: true })).woken).toEqual([]);
        expect((await emit(null, "approval", "n")).woken.map((w) => w.taskId)).toEqual([nobodys.id]);
        expect(await store().waits(mine.id)).toHaveLength(1);
        expect((await emit("alice", "approval", "a")).woken.map((w) => w.taskId)).toEqual([mine.id]);
      });

      it("the first outcome written wins: a wait whose checkpoint is kept already leaves it as it is", async () => {
        const a = await task();
        await store().registerWait(eventWait(a, "$event#1", "go"));
        expect(await store().saveCheckpoint(a.id, "$event#1", { value: "earlier" }, T0 + 5)).toBe(true);
        await emit("alice", "go", "later");
        expect(await kept(a.id, "$event#1")).toEqual({ value: "earlier" });
        expect(await store().waits(a.id)).toEqual([]);
      });

      it("two concurrent emitters of a wait's event: exactly one outcome, the wait satisfied once", async () => {
        for (let round = 0; round < 5; round++) {
          const a = await task();
          const name = `go-${round}`;
          expect(await store().registerWait(eventWait(a, "$event#1", name))).toBeNull();
          const results = await Promise.all([emit("alice", name, "first"), emit("alice", name, "second")]);
          const winners = results.filter((r) => r.woken.some((w) => w.taskId === a.id));
          expect(winners).toHaveLength(1);
          const outcome = (await kept(a.id, "$event#1")) as { value: WaitOutcome };
          expect(outcome.value).toMatchObject({ fired: "event", seq: winners[0]?.seq });
          expect(await store().waits(a.id)).toEqual([]);
        }
      });

      it("a registration racing an emission: satisfied exactly once, at registration or at emission, never lost", async () => {
        for (let round = 0; round < 10; round++) {
          const a = await task();
          const [outcome, emitted] = await Promise.all([
            store().registerWait(eventWait(a, "$event#1", `race-${round}`)),
            emit("alice", `race-${round}`, round, T0 + 10 + round),
          ]);
          const atEmission = emitted.woken.some((w) => w.taskId === a.id);
          expect(outcome === null).toBe(atEmission);
          expect(await kept(a.id, "$event#1")).toEqual({
            value: { fired: "event", at: T0 + 10 + round, seq: emitted.seq, payload: round },
          });
          expect(await store().waits(a.id)).toEqual([]);
        }
      });
    });

    describe("emitEvents (a batch in one write)", () => {
      it("stores the events in their order, each waking its own owner's waits, answered in the same order", async () => {
        const a = await task();
        const b = await task();
        const theirs = await task({ owner: "mallory" });
        await store().registerWait(eventWait(a, "$event#1", `approval/${a.id}`));
        await store().registerWait(eventWait(b, "$event#1", `approval/${b.id}`));
        await store().registerWait(eventWait(theirs, "$event#1", `approval/${theirs.id}`));
        const emitted = await store().emitEvents([
          { owner: "alice", name: `approval/${b.id}`, payload: { by: "b" }, now: T0 + 20 },
          { owner: "alice", name: `approval/${theirs.id}`, payload: { by: "alice" }, now: T0 + 20 },
          { owner: "alice", name: `approval/${a.id}`, payload: { by: "a" }, now: T0 + 21 },
        ]);
        expect(emitted.map((e) => e.woken)).toEqual([[{ taskId: b.id, parked: false }], [], [{ taskId: a.id, parked: false }]]);
        const [first, second, third] = emitted.map((e) => e.seq) as [number, number, number];
        expect(first < second && second < third).toBe(true);
        expect(await kept(b.id, "$event#1")).toEqual({ value: { fired: "event", at: T0 + 20, seq: first, payload: { by: "b" } } });
        expect(await kept(a.id, "$event#1")).toEqual({ value: { fired: "event", at: T0 + 21, seq: third, payload: { by: "a" } } });
        expect(await store().waits(theirs.id)).toHaveLength(1);
        expect((await emit("alice", "after-the-batch", null)).seq).toBeGreaterThan(third);
      });

      it("two events of one name in a batch: the wait takes the first, the second is kept for a later wait", async () => {
        const a = await task();
        await store().registerWait(eventWait(a, "$event#1", "tick-batch"));
        const [one, two] = await store().emitEvents([
          { owner: "alice", name: "tick-batch", payload: 1, now: T0 + 20 },
          { owner: "alice", name: "tick-batch", payload: 2, now: T0 + 20 },
        ]);
        expect(one?.woken.map((w) => w.taskId)).toEqual([a.id]);
        expect(two?.woken).toEqual([]);
        expect(await store().registerWait(eventWait(a, "$event#2", "tick-batch", { afterSeq: one?.seq ?? 0 }))).toEqual({
          fired: "event",
          at: T0 + 20,
          seq: two?.seq,
          payload: 2,
        });
      });

      it("an empty batch stores nothing", async () => {
        expect(await store().emitEvents([])).toEqual([]);
      });

      it("concurrent batches naming the same events in opposite orders: each wait satisfied exactly once", async () => {
        const tasks = await Promise.all([task(), task(), task(), task()]);
        for (const t of tasks) await store().registerWait(eventWait(t, "$event#1", `batch/${t.id}`));
        const events = tasks.map((t) => ({ owner: "alice", name: `batch/${t.id}`, payload: t.id, now: T0 + 30 }));
        const results = await Promise.all([store().emitEvents(events), store().emitEvents([...events].reverse())]);
        const woken = results.flat().flatMap((e) => e.woken.map((w) => w.taskId));
        expect(woken.sort()).toEqual(tasks.map((t) => t.id).sort());
        for (const t of tasks) {
          expect(await kept(t.id, "$event#1")).toMatchObject({ value: { fired: "event", payload: t.id } });
          expect(await store().waits(t.id)).toEqual([]);
        }
      });
    });

    describe("fireDue and nextDue", () => {
      it("fires due waits oldest due first, up to limit: a timer fires, an event wait times out", async () => {
        const a = await task();
        const b = await task();
        const c = await task();
        await store().registerWait(timer(a, "$sleep#1", T0 + 300));
        await store().registerWait(eventWait(b, "$event#1", "never", { dueAt: T0 + 100 }));
        await store().registerWait(timer(c, "$sleep#1", T0 + 200));
        await store().registerWait(timer(c, "$sleep#2", T0 + 9_000));
        expect(await store().fireDue(T0 + 250, 1)).toEqual([{ taskId: b.id, parked: false }]);
        expect(await kept(b.id, "$event#1")).toEqual({ value: { fired: "timeout", at: T0 + 250 } });
        expect(await store().fireDue(T0 + 250, 10)).toEqual([{ taskId: c.id, parked: false }]);
        expect(await kept(c.id, "$sleep#1")).toEqual({ value: { fired: "timer", at: T0 + 250 } });
        expect(await store().fireDue(T0 + 250, 10)).toEqual([]);
        expect(await store().waits(c.id)).toHaveLength(1);
        expect(await store().fireDue(T0 + 300, 0)).toEqual([]);
        expect(await store().fireDue(T0 + 300, 10)).toEqual([{ taskId: a.id, parked: false }]);
      });

      it("countDue counts the waits whose time has come and that have not fired yet", async () => {
        const a = await task();
        const b = await task();
        expect(await store().countDue(T0 + 1_000)).toBe(0);
        await store().registerWait(timer(a, "$sleep#1", T0 + 100));
        await store().registerWait(eventWait(b, "$event#1", "never", { dueAt: T0 + 200 }));
        await store().registerWait(eventWait(b, "$event#2", "no-timeout"));
        await store().registerWait(timer(b, "$sleep#1", T0 + 5_000));
        expect(await store().countDue(T0 + 99)).toBe(0);
        expect(await store().countDue(T0 + 100)).toBe(1);
        expect(await store().countDue(T0 + 1_000)).toBe(2);
        await store().fireDue(T0 + 1_000, 1);
        expect(await store().countDue(T0 + 1_000)).toBe(1);
      });

      it("nextDue is the earliest due time of any wait; an event wait without a timeout has none", async () => {
        expect(await store().nextDue()).toBeNull();
        const a = await task();
        await store().registerWait(eventWait(a, "$event#1", "x"));
        expect(await store().nextDue()).toBeNull();
        await store().registerWait(timer(a, "$sleep#1", T0 + 500));
        await store().registerWait(eventWait(a, "$event#2", "y", { dueAt: T0 + 400 }));
        expect(await store().nextDue()).toBe(T0 + 400);
        await store().fireDue(T0 + 400, 10);
        expect(await store().nextDue()).toBe(T0 + 500);
      });

      it("concurrent callers fire each due wait exactly once", async () => {
        const tasks: TaskRecord[] = [];
        for (let i = 0; i < 24; i++) {
          const t = await task();
          tasks.push(t);
          await store().registerWait(timer(t, "$sleep#1", T0 + i));
        }
        const batches = await Promise.all([1, 2, 3, 4].map(() => store().fireDue(T0 + 100, 4)));
        const rest = await store().fireDue(T0 + 100, 100);
        const fired = [...batches.flat(), ...rest].map((w) => w.taskId);
        expect(fired.sort()).toEqual(tasks.map((t) => t.id).sort());
        for (const batch of batches) expect(batch.length).toBeLessThanOrEqual(4);
      });
    });

    describe("wait modes and wake-ups", () => {
      it("a woken parked task is queued again with its mode cleared; one waiting in memory is told, and keeps its mode", async () => {
        const parked = await task();
        const inMemory = await task();
        await store().registerWait(timer(parked, "$sleep#1", T0 + 100));
        await store().registerWait(timer(inMemory, "$sleep#1", T0 + 100));
        expect(await store().setWaitMode(parked.id, "parked")).toBe(true);
        expect(await store().setWaitMode(inMemory.id, "memory")).toBe(true);
        const woken = await store().fireDue(T0 + 100, 10);
        expect(woken.sort((x, y) => Number(y.parked) - Number(x.parked))).toEqual([
          { taskId: parked.id, parked: true },
          { taskId: inMemory.id, parked: false },
        ]);
        expect(await store().waitMode(parked.id)).toBeNull();
        expect(await store().waitMode(inMemory.id)).toBe("memory");
      });

      it("search and countByStatus with {parked: true} see only parked tasks (the web view's filter)", async () => {
        const parked = await task();
        const inMemory = await task();
        await task();
        await store().registerWait(eventWait(parked, "$event#1", "go"));
        await store().registerWait(eventWait(inMemory, "$event#1", "go"));
        expect(await store().setWaitMode(parked.id, "parked")).toBe(true);
        expect(await store().setWaitMode(inMemory.id, "memory")).toBe(true);
        const found = await store().search({ scope: { any: true }, parked: true }, null, 10);
        expect(found.map((t) => t.id)).toEqual([parked.id]);
        expect((await store().search({ scope: { owner: "bob" }, parked: true }, null, 10)).length).toBe(0);
        expect((await store().countByStatus({ scope: { owner: "alice" }, parked: true })).working).toBe(1);
        expect((await store().countByStatus({ scope: { owner: "alice" } })).working).toBe(3);
      });

      it("the mode shows in every read (get, list, search) and is cleared by null", async () => {
        const a = await task();
        await store().registerWait(eventWait(a, "$event#1", "go"));
        expect(await store().setWaitMode(a.id, "parked")).toBe(true);
        expect(await store().waitMode(a.id)).toBe("parked");
        expect((await store().get(a.id, { owner: "alice" }))?.waitMode).toBe("parked");
        expect((await store().list("alice", null, 10))[0]?.waitMode).toBe("parked");
        expect((await store().search({ scope: { any: true } }, null, 10))[0]?.waitMode).toBe("parked");
        expect(await store().setWaitMode(a.id, "memory")).toBe(true);
        expect((await store().get(a.id, { any: true }))?.waitMode).toBe("memory");
        expect(await store().setWaitMode(a.id, null)).toBe(true);
        expect(await store().waitMode(a.id)).toBeNull();
        expect((await store().get(a.id, { any: true }))?.waitMode ?? null).toBeNull();
      });

      it("false, nothing written, for a finished or unknown task and for a claim that is not the task's current one", async () => {
        const a = await task();
        await store().registerWait(eventWait(a, "$event#1", "go"));
        expect(await store().setWaitMode(a.id, "parked", stray)).toBe(false);
        expect(await store().setWaitMode(a.id, "memory", stray)).toBe(false);
        expect(await store().waitMode(a.id)).toBeNull();
        expect(await store().setWaitMode("no-such-task", "parked")).toBe(false);
        const done = await store().transition(a.id, ["working"], "completed", { now: T0 + 5, outcome: { kind: "result", value: {} } });
        expect(done?.status).toBe("completed");
        expect(await store().setWaitMode(a.id, "parked")).toBe(false);
        expect(await store().waitMode(a.id)).toBeNull();
      });

      it("parking a task whose wait was satisfied before it parked queues it at once (no lost wake-up)", async () => {
        const a = await task();
        await store().registerWait(eventWait(a, "$event#1", "go"));
        await emit("alice", "go", 1);
        expect(await store().setWaitMode(a.id, "parked")).toBe(true);
        expect(await store().waitMode(a.id)).toBeNull();
        expect((await store().get(a.id, { any: true }))?.status).toBe("working");
      });

      it("parking racing the event that satisfies its wait: the task ends up queued, never parked with nothing to wait for", async () => {
        for (let round = 0; round < 10; round++) {
          const a = await task();
          const name = `park-race-${round}`;
          expect(await store().registerWait(eventWait(a, "$event#1", name))).toBeNull();
          const [parked] = await Promise.all([store().setWaitMode(a.id, "parked"), emit("alice", name, round)]);
          expect(parked).toBe(true);
          expect(await store().waitMode(a.id)).toBeNull();
          expect(await store().waits(a.id)).toEqual([]);
          expect(await kept(a.id, "$event#1")).toMatchObject({ value: { fired: "event", payload: round } });
        }
      });

      it("T-LIFE-3: a terminal transition clears the wait mode; a finished task's due wait wakes nothing", async () => {
        for (const status of TERMINAL_STATUSES) {
          const a = await task();
          await store().registerWait(timer(a, "$sleep#1", T0 + 100));
          await store().setWaitMode(a.id, "parked");
          const ended = await store().transition(a.id, allowedSources(status), status, {
            now: T0 + 5,
            ...(status !== "cancelled" && { outcome: { kind: "result", value: {} } }),
          });
          expect(ended?.waitMode ?? null).toBeNull();
          expect(await store().waitMode(a.id)).toBeNull();
          expect((await store().get(a.id, { any: true }))?.waitMode ?? null).toBeNull();
        }
        expect(await store().fireDue(T0 + 100, 10)).toEqual([]);
        expect(await store().nextDue()).toBeNull();
      });
    });

    describe("wakeAnswered (a parked question answered)", () => {
      async function parkedAsking(): Promise<TaskRecord> {
        const a = await task();
        await store().transition(a.id, ["working"], "input_required", { now: T0 + 1, statusMessage: "Waiting for an answer" });
        await store().enqueueInput({ id: "q1", taskId: a.id, method: "elicitation/create", params: {}, createdAt: T0 + 1 });
        expect(await store().setWaitMode(a.id, "parked")).toBe(true);
        return a;
      }

      it("moves a parked, answered task to working, clears its mode and appends the change to its history", async () => {
        const a = await parkedAsking();
        expect(await store().wakeAnswered(a.id, T0 + 50)).toBe(false);
        expect(await store().answerInput(a.id, "q1", { kind: "result", value: { action: "accept" } })).toBe(true);
        expect(await store().wakeAnswered(a.id, T0 + 60)).toBe(true);
        const read = await store().get(a.id, { any: true });
        expect(read).toMatchObject({ status: "working", updatedAt: T0 + 60 });
        expect(read?.waitMode ?? null).toBeNull();
        expect((await store().history(a.id)).map((c) => [c.status, c.at])).toEqual([
          ["working", T0],
          ["input_required", T0 + 1],
          ["working", T0 + 60],
        ]);
        expect(await store().wakeAnswered(a.id, T0 + 70)).toBe(false);
      });

      it("false for a task not parked, not in input_required, or unknown", async () => {
        const asking = await task();
        await store().transition(asking.id, ["working"], "input_required", { now: T0 + 1 });
        expect(await store().wakeAnswered(asking.id, T0 + 5)).toBe(false);
        const sleeping = await task();
        await store().registerWait(timer(sleeping, "$sleep#1", T0 + 100));
        await store().setWaitMode(sleeping.id, "parked");
        expect(await store().wakeAnswered(sleeping.id, T0 + 5)).toBe(false);
        expect(await store().waitMode(sleeping.id)).toBe("parked");
        expect(await store().wakeAnswered("no-such-task", T0 + 5)).toBe(false);
      });

      it("keeps the kept per-status counts exact", async () => {
        const a = await parkedAsking();
        await store().answerInput(a.id, "q1", { kind: "result", value: {} });
        await store().wakeAnswered(a.id, T0 + 60);
        const counts = await store().countByStatus({ scope: { any: true } });
        expect(counts).toMatchObject({ working: 1, input_required: 0 });
        const counted = await store().countByStatus({ scope: { any: true }, idPrefix: "" });
        expect(counted).toEqual(counts);
      });
    });

    describe("parkedCounts", () => {
      it("counts parked tasks by what they wait for: a question, a timer, an event; not those waiting in memory", async () => {
        const asking = await task();
        await store().transition(asking.id, ["working"], "input_required", { now: T0 + 1 });
        await store().enqueueInput({ id: "q1", taskId: asking.id, method: "elicitation/create", params: {}, createdAt: T0 + 1 });
        await store().setWaitMode(asking.id, "parked");
        for (let i = 0; i < 2; i++) {
          const sleeper = await task();
          await store().registerWait(timer(sleeper, "$sleep#1", T0 + 100));
          await store().setWaitMode(sleeper.id, "parked");
        }
        const waiter = await task();
        await store().registerWait(eventWait(waiter, "$event#1", "go", { dueAt: T0 + 1_000 }));
        await store().setWaitMode(waiter.id, "parked");
        const inMemory = await task();
        await store().registerWait(timer(inMemory, "$sleep#1", T0 + 100));
        await store().setWaitMode(inMemory.id, "memory");
        expect(await store().parkedCounts()).toEqual({ input: 1, timer: 2, event: 1 });
        await store().fireDue(T0 + 100, 10);
        expect(await store().parkedCounts()).toEqual({ input: 1, timer: 0, event: 1 });
      });
    });

    describe("retention", () => {
      it("the expiry sweep deletes a task's waits with it", async () => {
        const a = await task({ ttlMs: 1_000 });
        await store().registerWait(timer(a, "$sleep#1", T0 + 99_000));
        await store().transition(a.id, ["working"], "cancelled", { now: T0 + 5 });
        expect((await store().deleteExpired(T0 + 2_000, 10)).deleted).toBe(1);
        expect(await store().waits(a.id)).toEqual([]);
        expect(await store().nextDue()).toBeNull();
      });

      it("a parked task stays active (listed for the sweeper), and events stay until dropEventsBefore", async () => {
        const a = await task();
        await store().registerWait(timer(a, "$sleep#1", T0 + 100));
        await store().setWaitMode(a.id, "parked");
        expect((await store().activeTasks(10)).map((t) => t.id)).toEqual([a.id]);
        await emit("alice", "late", 1, T0 + 10);
        await emit("alice", "late", 2, T0 + 20);
        await emit("alice", "late", 3, T0 + 30);
        expect(await store().dropEventsBefore(T0 + 30, 1)).toBe(1);
        expect(await store().dropEventsBefore(T0 + 30, 10)).toBe(1);
        expect(await store().dropEventsBefore(T0 + 30, 10)).toBe(0);
        const outcome = await store().registerWait(eventWait(a, "$event#1", "late"));
        expect(outcome).toMatchObject({ fired: "event", payload: 3 });
      });
    });
  });
}
