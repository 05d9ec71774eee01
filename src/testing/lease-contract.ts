/**
 * The behavioural contract of {@link LeaseStore}: how a cluster store hands queued tasks to
 * workers. Any implementation runs this suite unchanged, next to {@link storeContract}.
 *
 * Time is the `now` every operation takes: a lease "expires" by passing a later `now`, never by
 * waiting. Concurrency cases run their callers through one store at once; a pool-backed store
 * serves them on separate connections, so the database's locking is what is tested.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newTaskId } from "../core/task-id.js";
import { allowedSources, TERMINAL_STATUSES, type TaskStatus } from "../core/task-status.js";
import type { NewTask, TaskOutcome, TaskRecord } from "../core/task.js";
import type { WorkerBeat } from "../store/cluster-view.js";
import type { ClusterStore } from "../store/lease-store.js";
import type { Claim, ClaimedTask } from "../store/claim.js";
import { isCheckpointStore } from "../store/checkpoint-store.js";
import { isWaitStore, type WaitRecord } from "../store/wait-store.js";
import { newTask } from "./store-contract.js";
import { isToolPauseStore } from "../store/tool-pause-store.js";

const T0 = 1_700_000_000_000;
const LEASE = 30_000;

const RESULT: TaskOutcome = { kind: "result", value: { content: [{ type: "text", text: "done" }] } };
const LOST: TaskOutcome = { kind: "error", error: { code: -32603, message: "The task's worker stopped responding" } };

/** Registers the {@link LeaseStore} contract suite in vitest under `name`: `make` returns a fresh, empty cluster store for each test. */
export function leaseContract(name: string, make: () => Promise<ClusterStore> | ClusterStore): void {
  describe(`${name}: LeaseStore contract`, () => {
    let store: ClusterStore;

    beforeEach(async () => {
      store = await make();
    });

    afterEach(async () => {
      await store.close();
    });

    /** Creates a queued (unclaimed, working) task; `createdAt` defaults to T0. */
    const queued = (overrides: Partial<NewTask> = {}): Promise<TaskRecord> => store.create(newTask(overrides));

    /** Creates a task, walks it along legal moves to `status`, without ever claiming it. */
    async function unclaimedIn(status: TaskStatus, overrides: Partial<NewTask> = {}): Promise<TaskRecord> {
      const created = await queued(overrides);
      if (status === "working") return created;
      const moved = await store.transition(created.id, allowedSources(status), status, { now: T0 + 1 });
      if (moved === null) throw new Error(`could not move a new task to ${status}`);
      return moved;
    }

    /** Queues one task and leases it to `worker` at `now` for `leaseMs`. */
    async function leasedTo(worker: string, now = T0, leaseMs = LEASE, overrides: Partial<NewTask> = {}): Promise<ClaimedTask> {
      const task = await queued(overrides);
      const claimed = await store.claim(worker, 1, leaseMs, now);
      expect(claimed.map((t) => t.id)).toEqual([task.id]);
      return claimed[0]!;
    }

    const expiredIds = async (now: number): Promise<string[]> => (await store.expiredLeases(now, 100)).map((e) => e.task.id);

    describe("queuedSince", () => {
      it("says whether an unclaimed working task created at the time given or before waits, of the names given if any", async () => {
        expect(await store.queuedSince(T0 + 1_000)).toBe(false);
        await queued({ name: "render", createdAt: T0 + 100 });
        expect(await store.queuedSince(T0 + 99)).toBe(false);
        expect(await store.queuedSince(T0 + 100)).toBe(true);
        expect(await store.queuedSince(T0 + 100, ["render"])).toBe(true);
        expect(await store.queuedSince(T0 + 100, ["sleep"])).toBe(false);
        expect(await store.queuedSince(T0 + 100, [])).toBe(false);
      });

      it("does not count a task once claimed, nor one that waits for input or has ended", async () => {
        await leasedTo("w1", T0);
        await unclaimedIn("input_required");
        for (const status of TERMINAL_STATUSES) await unclaimedIn(status);
        expect(await store.queuedSince(T0 + 1_000)).toBe(false);
      });

      it("does not count a task of a paused tool (a standby has nothing to claim for it)", async () => {
        if (!isToolPauseStore(store)) throw new Error("a cluster store keeps paused tools (ToolPauseStore)");
        await queued({ name: "render", createdAt: T0 + 100 });
        await store.pauseTool({ name: "render", pausedAt: T0, pausedBy: "admin" });
        expect(await store.queuedSince(T0 + 1_000)).toBe(false);
        expect(await store.queuedSince(T0 + 1_000, ["render"])).toBe(false);
        await store.resumeTool("render");
        expect(await store.queuedSince(T0 + 1_000, ["render"])).toBe(true);
      });
    });

    describe("claim", () => {
      it("leases the oldest unclaimed working tasks first, (createdAt, id) order, up to limit", async () => {
        const late = await queued({ id: "00000000-0000-4000-8000-000000000001", createdAt: T0 + 10 });
        const tieB = await queued({ id: "bbbbbbbb-0000-4000-8000-000000000000", createdAt: T0 });
        const tieA = await queued({ id: "aaaaaaaa-0000-4000-8000-000000000000", createdAt: T0 });
        const first = await store.claim("w1", 2, LEASE, T0 + 100);
        expect(first.map((t) => t.id)).toEqual([tieA.id, tieB.id]);
        expect((await store.claim("w2", 5, LEASE, T0 + 100)).map((t) => t.id)).toEqual([late.id]);
        expect(await store.claim("w3", 5, LEASE, T0 + 100)).toEqual([]);
      });

      it("returns the tasks as stored, still working, with the number of this run (attempt 1 for the first claim)", async () => {
        const task = await queued();
        const [claimed] = await store.claim("w1", 1, LEASE, T0 + 5);
        const { claim, attempt, ...record } = claimed!;
        expect(record).toEqual(await store.get(task.id, { any: true }));
        expect(record.status).toBe("working");
        expect(record).toEqual(task);
        expect(claim).toEqual({ workerId: "w1", generation: 1, attempt: 1 });
        expect(attempt).toBe(1);
      });

      it("counts each claim of a task in its attempt: a re-queued task is claimed as attempt 2", async () => {
        const task = await queued();
        await store.claim("w1", 1, LEASE, T0 + 5);
        expect(await store.requeue(task.id, "w1", 3, T0 + 5 + LEASE)).toBe(true);
        const [again] = await store.claim("w2", 1, LEASE, T0 + 10 + LEASE);
        expect(again).toMatchObject({ id: task.id, attempt: 2, claim: { workerId: "w2", attempt: 2 } });
      });

      it("never hands out a claimed, input_required or terminal task", async () => {
        await leasedTo("w1");
        await unclaimedIn("input_required");
        for (const status of TERMINAL_STATUSES) await unclaimedIn(status);
        expect(await store.claim("w2", 10, LEASE, T0 + 1)).toEqual([]);
      });

      it("a limit of 0 or less claims nothing", async () => {
        await queued();
        expect(await store.claim("w1", 0, LEASE, T0)).toEqual([]);
        expect(await store.claim("w1", -3, LEASE, T0)).toEqual([]);
        expect(await store.queueDepth()).toBe(1);
      });

      it("with names, claims only tasks of those names (oldest first), and an empty list claims nothing", async () => {
        const render = await queued({ name: "render", createdAt: T0 + 2 });
        await queued({ name: "sleep", createdAt: T0 });
        const batch = await queued({ name: "batch", createdAt: T0 + 1 });
        expect(await store.claim("w1", 10, LEASE, T0, [])).toEqual([]);
        expect((await store.claim("w1", 10, LEASE, T0, ["render", "batch", "unknown"])).map((t) => t.id)).toEqual([batch.id, render.id]);
        expect((await store.claim("w2", 10, LEASE, T0)).map((t) => t.name)).toEqual(["sleep"]);
      });

      it("concurrent claimers never get the same task: 4 claimers over 50 tasks claim each exactly once", async () => {
        const ids: string[] = [];
        for (let i = 0; i < 50; i++) ids.push((await queued({ createdAt: T0 + (i % 7) })).id);
        const claimer = async (worker: string): Promise<string[]> => {
          const mine: string[] = [];
          for (;;) {
            const batch = await store.claim(worker, 3, LEASE, T0 + 10);
            if (batch.length === 0) return mine;
            mine.push(...batch.map((t) => t.id));
          }
        };
        const results = await Promise.all(["w1", "w2", "w3", "w4"].map(claimer));
        const all = results.flat();
        expect(all).toHaveLength(50);
        expect(new Set(all).size).toBe(50);
        expect([...all].sort()).toEqual([...ids].sort());
        expect(await store.queueDepth()).toBe(0);
        // Each task is leased to the worker that got it.
        const leases = await store.expiredLeases(T0 + 10 + LEASE, 100);
        const owners = new Map(leases.map((l) => [l.task.id, l.workerId]));
        results.forEach((mine, i) => {
          for (const id of mine) expect(owners.get(id)).toBe(`w${i + 1}`);
        });
      });
    });

    describe("renew", () => {
      it("extends the leases the worker still holds", async () => {
        const task = await leasedTo("w1", T0, 1000);
        expect(await store.renew("w1", [task.id], 1000, T0 + 900)).toEqual([task.id]);
        expect(await expiredIds(T0 + 1000)).toEqual([]);
        expect(await expiredIds(T0 + 1900)).toEqual([task.id]);
      });

      it("returns only the ids still held: not another worker's, not unknown ones, not unclaimed ones", async () => {
        const mine = await leasedTo("w1");
        const theirs = await leasedTo("w2");
        const unclaimed = await queued();
        const held = await store.renew("w1", [mine.id, theirs.id, unclaimed.id, newTaskId()], LEASE, T0 + 10);
        expect(held).toEqual([mine.id]);
        // The other worker's lease was not touched.
        expect(await expiredIds(T0 + LEASE)).toEqual([theirs.id]);
      });

      it("an expired lease is not renewed: the worker has lost it", async () => {
        const task = await leasedTo("w1", T0, 1000);
        expect(await store.renew("w1", [task.id], 1000, T0 + 1000)).toEqual([]);
        expect(await store.renew("w1", [task.id], 1000, T0 + 5000)).toEqual([]);
        expect(await expiredIds(T0 + 1000)).toEqual([task.id]);
      });

      it("no ids renews nothing", async () => {
        await leasedTo("w1");
        expect(await store.renew("w1", [], LEASE, T0)).toEqual([]);
      });
    });

    describe("heldLeases (a worker that lost a claim's answer asks what it holds)", () => {
      it("lists the worker's unexpired leases with the claims the claim statement handed out", async () => {
        const a = await leasedTo("w1", T0, 1000);
        const b = await leasedTo("w1", T0, 1000);
        await leasedTo("w2", T0, 1000);
        const held = await store.heldLeases("w1", T0 + 10);
        expect(held.map((t) => t.id).sort()).toEqual([a.id, b.id].sort());
        for (const task of held) expect(task.claim).toEqual({ workerId: "w1", generation: 1, attempt: 1 });
      });

      it("leaves out expired leases and ended tasks", async () => {
        await leasedTo("w1", T0, 100);
        const ended = await leasedTo("w1", T0, 1000);
        await store.transition(ended.id, allowedSources("completed"), "completed", { now: T0 + 50, outcome: RESULT });
        expect(await store.heldLeases("w1", T0 + 200)).toEqual([]);
      });
    });

    describe("expiredLeases", () => {
      it("lists non-terminal tasks whose lease ran out (expiry ≤ now), soonest deadline first, with worker, attempts and expiry", async () => {
        const a = await leasedTo("w1", T0, 3000);
        const b = await leasedTo("w2", T0, 1000);
        const c = await leasedTo("w1", T0, 2000);
        await leasedTo("w3", T0, 10_000);
        expect(await expiredIds(T0 + 999)).toEqual([]);
        expect(await store.expiredLeases(T0 + 3000, 10)).toEqual([
          { task: await store.get(b.id, { any: true }), workerId: "w2", attempts: 1, expiresAt: T0 + 1000 },
          { task: await store.get(c.id, { any: true }), workerId: "w1", attempts: 1, expiresAt: T0 + 2000 },
          { task: await store.get(a.id, { any: true }), workerId: "w1", attempts: 1, expiresAt: T0 + 3000 },
        ]);
        expect((await store.expiredLeases(T0 + 3000, 2)).map((e) => e.task.id)).toEqual([b.id, c.id]);
        expect(await store.expiredLeases(T0 + 3000, 0)).toEqual([]);
      });

      it("includes a leased task waiting in input_required", async () => {
        const task = await leasedTo("w1", T0, 1000);
        await store.transition(task.id, allowedSources("input_required"), "input_required", { now: T0 + 1 });
        const [expired] = await store.expiredLeases(T0 + 1000, 10);
        expect(expired?.task.status).toBe("input_required");
        expect(expired?.workerId).toBe("w1");
      });

      it("never lists unclaimed tasks", async () => {
        await queued();
        await unclaimedIn("input_required");
        expect(await expiredIds(T0 + 10 * LEASE)).toEqual([]);
      });
    });

    describe("a terminal transition drops the lease", () => {
      it.each(TERMINAL_STATUSES)("%s: the lease is gone from expiredLeases, renew and the queue", async (terminal) => {
        const task = await leasedTo("w1");
        const outcome = terminal === "cancelled" ? undefined : RESULT;
        expect((await store.transition(task.id, allowedSources(terminal), terminal, { now: T0 + 5, outcome }))?.status).toBe(terminal);
        expect(await expiredIds(T0 + 10 * LEASE)).toEqual([]);
        expect(await store.renew("w1", [task.id], LEASE, T0 + 6)).toEqual([]);
        expect(await store.queueDepth()).toBe(0);
        expect(await store.claim("w2", 10, LEASE, T0 + 7)).toEqual([]);
        expect(await store.requeue(task.id, "w1", 10, T0 + 10 * LEASE)).toBe(false);
      });

      it("a non-terminal move keeps it: input_required and back", async () => {
        const task = await leasedTo("w1");
        await store.transition(task.id, allowedSources("input_required"), "input_required", { now: T0 + 1 });
        expect(await store.renew("w1", [task.id], LEASE, T0 + 2)).toEqual([task.id]);
        await store.transition(task.id, allowedSources("working"), "working", { now: T0 + 3 });
        expect(await store.renew("w1", [task.id], LEASE, T0 + 4)).toEqual([task.id]);
        expect(await store.queueDepth()).toBe(0);
      });
    });

    describe("requeue (the reaper's CAS)", () => {
      it("puts a lost worker's task back in the queue, unclaimed and working, saying why", async () => {
        const task = await leasedTo("w1", T0, 1000);
        await store.annotate(task.id, { progress: { progress: 4, total: 5 }, now: T0 + 10 });
        expect(await store.requeue(task.id, "w1", 3, T0 + 1000)).toBe(true);
        const again = await store.get(task.id, { any: true });
        expect(again).toMatchObject({ status: "working", updatedAt: T0 + 1000, progress: null });
        expect(again?.statusMessage).toMatch(/run again/);
        expect(await expiredIds(T0 + 10 * LEASE)).toEqual([]);
        expect(await store.queueDepth()).toBe(1);
        expect(await store.renew("w1", [task.id], 1000, T0 + 1001)).toEqual([]);
        // The timeline shows the re-run.
        expect((await store.history(task.id)).at(-1)).toEqual({
          status: "working",
          statusMessage: again?.statusMessage,
          at: T0 + 1000,
          node: "w1",
        });
      });

      it("the next claim is the next attempt", async () => {
        const task = await leasedTo("w1", T0, 1000);
        await store.requeue(task.id, "w1", 3, T0 + 1000);
        expect((await store.claim("w2", 1, 1000, T0 + 2000)).map((t) => t.id)).toEqual([task.id]);
        expect(await store.expiredLeases(T0 + 3000, 10)).toMatchObject([{ workerId: "w2", attempts: 2 }]);
      });

      it("moves an input_required task back to working and answers the lost run's pending inputs with an error", async () => {
        const task = await leasedTo("w1", T0, 1000);
        await store.transition(task.id, allowedSources("input_required"), "input_required", { now: T0 + 1 });
        const ask = { taskId: task.id, method: "elicitation/create", params: { message: "?" } };
        await store.enqueueInput({ ...ask, id: "answered", createdAt: T0 + 2 });
        await store.enqueueInput({ ...ask, id: "pending", createdAt: T0 + 3 });
        const answer: TaskOutcome = { kind: "result", value: { action: "accept", content: { a: 1 } } };
        await store.answerInput(task.id, "answered", answer);

        expect(await store.requeue(task.id, "w1", 3, T0 + 1000)).toBe(true);
        expect((await store.get(task.id, { any: true }))?.status).toBe("working");
        expect(await store.pendingInputs(task.id)).toEqual([]);
        expect((await store.getInput(task.id, "answered"))?.answer).toEqual(answer);
        expect((await store.getInput(task.id, "pending"))?.answer).toEqual({
          kind: "error",
          error: { code: -32603, message: "Superseded: the task was re-run" },
        });
      });

      it("with keepInputs (a resumed task), leaves the lost run's pending inputs pending for the next run", async () => {
        const task = await leasedTo("w1", T0, 1000);
        await store.transition(task.id, allowedSources("input_required"), "input_required", { now: T0 + 1 });
        await store.enqueueInput({
          taskId: task.id,
          id: "pending",
          method: "elicitation/create",
          params: { message: "?" },
          createdAt: T0 + 2,
        });

        expect(await store.requeue(task.id, "w1", 3, T0 + 1000, { keepInputs: true })).toBe(true);
        expect((await store.get(task.id, { any: true }))?.status).toBe("working");
        expect((await store.pendingInputs(task.id)).map((input) => input.id)).toEqual(["pending"]);
      });

      it("loses (false, nothing written) for the wrong worker, an unexpired lease, exhausted attempts, or an unknown task", async () => {
        const task = await leasedTo("w1", T0, 1000);
        const before = await store.get(task.id, { any: true });
        expect(await store.requeue(task.id, "w2", 3, T0 + 1000)).toBe(false);
        expect(await store.requeue(task.id, "w1", 3, T0 + 999)).toBe(false);
        expect(await store.requeue(task.id, "w1", 1, T0 + 1000)).toBe(false);
        expect(await store.requeue(task.id, "w1", 0, T0 + 1000)).toBe(false);
        expect(await store.requeue(newTaskId(), "w1", 3, T0 + 1000)).toBe(false);
        expect(await store.get(task.id, { any: true })).toEqual(before);
        expect(await store.expiredLeases(T0 + 1000, 10)).toMatchObject([{ workerId: "w1", attempts: 1 }]);
      });

      it("loses after the worker renewed in time, and for an unclaimed task", async () => {
        const task = await leasedTo("w1", T0, 1000);
        await store.renew("w1", [task.id], 1000, T0 + 500);
        expect(await store.requeue(task.id, "w1", 3, T0 + 1000)).toBe(false);
        const unclaimed = await queued();
        expect(await store.requeue(unclaimed.id, "w1", 3, T0 + 10 * LEASE)).toBe(false);
      });

      it("attempts count runs: a task claimed twice may not be re-queued with maxAttempts 2", async () => {
        const task = await leasedTo("w1", T0, 1000);
        expect(await store.requeue(task.id, "w1", 2, T0 + 1000)).toBe(true);
        await store.claim("w2", 1, 1000, T0 + 2000);
        expect(await store.requeue(task.id, "w2", 2, T0 + 3000)).toBe(false);
        expect(await store.requeue(task.id, "w2", 3, T0 + 3000)).toBe(true);
      });

      it("concurrent reapers: exactly one re-queues", async () => {
        const task = await leasedTo("w1", T0, 1000);
        const results = await Promise.all([1, 2, 3, 4].map(() => store.requeue(task.id, "w1", 3, T0 + 1000)));
        expect(results.filter(Boolean)).toHaveLength(1);
        expect((await store.history(task.id)).map((c) => c.status)).toEqual(["working", "working"]);
      });
    });

    describe("failExpired (the reaper's other CAS)", () => {
      it("fails the lost worker's task with the message and outcome, and drops the lease", async () => {
        const task = await leasedTo("w1", T0, 1000);
        const failed = await store.failExpired(task.id, "w1", T0 + 1000, "worker lost", LOST);
        expect(failed).toMatchObject({ id: task.id, status: "failed", statusMessage: "worker lost", outcome: LOST, updatedAt: T0 + 1000 });
        expect(await store.get(task.id, { any: true })).toEqual(failed);
        expect(await expiredIds(T0 + 10 * LEASE)).toEqual([]);
        expect(await store.queueDepth()).toBe(0);
        expect((await store.history(task.id)).at(-1)).toEqual({
          status: "failed",
          statusMessage: "worker lost",
          at: T0 + 1000,
          node: "w1",
        });
      });

      it("fails a lost task waiting in input_required", async () => {
        const task = await leasedTo("w1", T0, 1000);
        await store.transition(task.id, allowedSources("input_required"), "input_required", { now: T0 + 1 });
        expect((await store.failExpired(task.id, "w1", T0 + 1000, "worker lost", LOST))?.status).toBe("failed");
      });

      it("loses (null, nothing written) for the wrong worker, an unexpired or renewed lease, a re-queued or finished task", async () => {
        const task = await leasedTo("w1", T0, 1000);
        const before = await store.get(task.id, { any: true });
        expect(await store.failExpired(task.id, "w2", T0 + 1000, "x", LOST)).toBeNull();
        expect(await store.failExpired(task.id, "w1", T0 + 999, "x", LOST)).toBeNull();
        expect(await store.failExpired(newTaskId(), "w1", T0 + 1000, "x", LOST)).toBeNull();
        await store.renew("w1", [task.id], 1000, T0 + 500);
        expect(await store.failExpired(task.id, "w1", T0 + 1000, "x", LOST)).toBeNull();
        expect(await store.get(task.id, { any: true })).toEqual(before);

        const requeued = await leasedTo("w1", T0, 1000);
        await store.requeue(requeued.id, "w1", 3, T0 + 1000);
        expect(await store.failExpired(requeued.id, "w1", T0 + 1000, "x", LOST)).toBeNull();
        // Re-claimed by another worker: a stale reaper holding the old worker's id cannot fail it.
        await store.claim("w2", 1, 1000, T0 + 2000);
        expect(await store.failExpired(requeued.id, "w1", T0 + 5000, "x", LOST)).toBeNull();

        const done = await leasedTo("w1", T0, 1000);
        await store.transition(done.id, allowedSources("completed"), "completed", { now: T0 + 1, outcome: RESULT });
        expect(await store.failExpired(done.id, "w1", T0 + 1000, "x", LOST)).toBeNull();
        expect((await store.get(done.id, { any: true }))?.status).toBe("completed");
      });

      it("racing requeue and failExpired: exactly one wins", async () => {
        const task = await leasedTo("w1", T0, 1000);
        const [requeued, failed] = await Promise.all([
          store.requeue(task.id, "w1", 3, T0 + 1000),
          store.failExpired(task.id, "w1", T0 + 1000, "worker lost", LOST),
        ]);
        expect([requeued, failed !== null].filter(Boolean)).toHaveLength(1);
      });
    });

    describe("release", () => {
      it("drops the worker's lease: a task left working is queued again, and no reaper sees it", async () => {
        const task = await leasedTo("w1");
        await store.release(task.id, task.claim);
        expect(await expiredIds(T0 + 10 * LEASE)).toEqual([]);
        expect(await store.renew("w1", [task.id], LEASE, T0 + 1)).toEqual([]);
        expect(await store.queueDepth()).toBe(1);
        expect((await store.claim("w2", 1, LEASE, T0 + 2)).map((t) => t.id)).toEqual([task.id]);
      });

      it("leaves the lease of a newer claim of the same worker alone (its lease had run out and it claimed the task again)", async () => {
        const task = await leasedTo("w1", T0, 1000);
        expect(await store.requeue(task.id, "w1", 3, T0 + 1000)).toBe(true);
        const [again] = await store.claim("w1", 1, LEASE, T0 + 2000);
        expect(again?.claim.generation).toBe(task.claim.generation + 1);
        await store.release(task.id, task.claim);
        expect(await store.renew("w1", [task.id], LEASE, T0 + 2001)).toEqual([task.id]);
        expect(await store.queueDepth()).toBe(0);
      });

      it("leaves another worker's lease alone, and ignores unknown tasks", async () => {
        const task = await leasedTo("w1");
        await store.release(task.id, { ...task.claim, workerId: "w2" });
        await store.release(newTaskId(), task.claim);
        expect(await store.renew("w1", [task.id], LEASE, T0 + 1)).toEqual([task.id]);
      });
    });

    describe("handBack (a draining worker gives a task back)", () => {
      const HANDED = "Handed back by a worker that shut down; queued for another";

      it("queues the task again at once, unclaimed, with the message and a timeline entry", async () => {
        const task = await leasedTo("w1");
        const handed = await store.handBack(task.id, task.claim, T0 + 5, HANDED);
        expect(handed).toMatchObject({ id: task.id, status: "working", statusMessage: HANDED, updatedAt: T0 + 5 });
        expect(await store.queueDepth()).toBe(1);
        expect(await expiredIds(T0 + 10 * LEASE)).toEqual([]);
        expect((await store.history(task.id)).at(-1)).toEqual({ status: "working", statusMessage: HANDED, at: T0 + 5, node: "w1" });
        expect((await store.claim("w2", 1, LEASE, T0 + 6)).map((t) => t.id)).toEqual([task.id]);
      });

      it("does not count the run it gave up against the attempts", async () => {
        const task = await leasedTo("w1", T0, 1000);
        await store.handBack(task.id, task.claim, T0 + 5, HANDED);
        await store.claim("w2", 1, 1000, T0 + 6);
        expect(await store.expiredLeases(T0 + 2000, 10)).toMatchObject([{ workerId: "w2", attempts: 1 }]);
      });

      it("moves an input_required task back to working and keeps its inputs, answered and pending, for the next run", async () => {
        const task = await leasedTo("w1");
        await store.transition(task.id, allowedSources("input_required"), "input_required", { now: T0 + 1 });
        await store.enqueueInput({
          taskId: task.id,
          id: "pending",
          method: "elicitation/create",
          params: { message: "?" },
          createdAt: T0 + 2,
        });
        expect((await store.handBack(task.id, task.claim, T0 + 5, HANDED))?.status).toBe("working");
        expect((await store.pendingInputs(task.id)).map((i) => i.id)).toEqual(["pending"]);
      });

      it("refuses (null, nothing written) a task the same worker claimed again since", async () => {
        const task = await leasedTo("w1", T0, 1000);
        await store.requeue(task.id, "w1", 3, T0 + 1000);
        const [again] = await store.claim("w1", 1, LEASE, T0 + 2000);
        expect(await store.handBack(task.id, task.claim, T0 + 2001, HANDED)).toBeNull();
        expect(await store.renew("w1", [task.id], LEASE, T0 + 2002)).toEqual([task.id]);
        expect(await store.handBack(task.id, again!.claim, T0 + 2003, HANDED)).toMatchObject({ status: "working", statusMessage: HANDED });
      });

      it("refuses (null, nothing written) another worker's task, an ended task, and an unknown one", async () => {
        const task = await leasedTo("w1");
        expect(await store.handBack(task.id, { ...task.claim, workerId: "w2" }, T0 + 5, HANDED)).toBeNull();
        expect(await store.renew("w1", [task.id], LEASE, T0 + 6)).toEqual([task.id]);
        await store.transition(task.id, allowedSources("completed"), "completed", { now: T0 + 7, outcome: RESULT });
        expect(await store.handBack(task.id, task.claim, T0 + 8, HANDED)).toBeNull();
        expect((await store.get(task.id, { any: true }))?.status).toBe("completed");
        expect(await store.handBack(newTaskId(), task.claim, T0 + 8, HANDED)).toBeNull();
      });
    });

    describe("fencing: a worker's writes name its claim, and a superseded claim changes nothing", () => {
      /** Leases a task to w1, loses it (re-queued), and leases it to w2: the first claim and the current one. */
      async function takenOver(overrides: Partial<NewTask> = {}): Promise<{ task: TaskRecord; stale: Claim; current: Claim }> {
        const task = await queued(overrides);
        const [first] = await store.claim("w1", 1, 1000, T0);
        expect(await store.requeue(task.id, "w1", 3, T0 + 1000, { keepInputs: true })).toBe(true);
        const [second] = await store.claim("w2", 1, LEASE, T0 + 2000);
        return { task, stale: first!.claim, current: second!.claim };
      }

      it("each claim is a new generation and the next attempt; the same worker claiming again is a new claim too", async () => {
        const task = await queued();
        const [first] = await store.claim("w1", 1, 1000, T0);
        expect(first?.claim).toEqual({ workerId: "w1", generation: 1, attempt: 1 });
        await store.requeue(task.id, "w1", 3, T0 + 1000);
        const [again] = await store.claim("w1", 1, 1000, T0 + 2000);
        expect(again?.claim).toEqual({ workerId: "w1", generation: 2, attempt: 2 });
        // A hand-back un-counts the attempt, never the generation.
        await store.handBack(task.id, again!.claim, T0 + 2001, "handed back");
        const [third] = await store.claim("w1", 1, 1000, T0 + 2002);
        expect(third?.claim).toEqual({ workerId: "w1", generation: 3, attempt: 2 });
      });

      it("the outcome of the current claim is stored; that of a superseded one is not, even when it comes first", async () => {
        const { task, stale, current } = await takenOver();
        const late: TaskOutcome = { kind: "result", value: { content: [{ type: "text", text: "late" }] } };
        expect(
          await store.transition(task.id, allowedSources("completed"), "completed", { now: T0 + 3000, outcome: late, claim: stale }),
        ).toBeNull();
        expect((await store.get(task.id, { any: true }))?.status).toBe("working");
        const done = await store.transition(task.id, allowedSources("completed"), "completed", {
          now: T0 + 3001,
          outcome: RESULT,
          claim: current,
        });
        expect(done).toMatchObject({ status: "completed", outcome: RESULT });
      });

      it("a superseded claim cannot move the status (input_required), report progress or set a status message", async () => {
        const { task, stale } = await takenOver();
        const before = await store.get(task.id, { any: true });
        expect(await store.transition(task.id, ["working"], "input_required", { now: T0 + 3000, claim: stale })).toBeNull();
        expect(await store.annotate(task.id, { progress: { progress: 9, total: 10 }, now: T0 + 3000, claim: stale })).toBe(false);
        expect(await store.annotate(task.id, { statusMessage: "stale", now: T0 + 3000, claim: stale })).toBe(false);
        expect(await store.get(task.id, { any: true })).toEqual(before);
      });

      it("the current claim's progress and status message are stored", async () => {
        const { task, current } = await takenOver();
        expect(await store.annotate(task.id, { progress: { progress: 1, total: 2 }, now: T0 + 3000, claim: current })).toBe(true);
        expect(await store.annotate(task.id, { statusMessage: "half", now: T0 + 3000, claim: current })).toBe(true);
        expect(await store.get(task.id, { any: true })).toMatchObject({ progress: { progress: 1, total: 2 }, statusMessage: "half" });
      });

      it("a superseded claim's checkpoint is not kept; the current claim's is", async () => {
        if (!isCheckpointStore(store)) return;
        const { task, stale, current } = await takenOver();
        expect(await store.saveCheckpoint(task.id, "fetch#1", { by: "stale" }, T0 + 3000, stale)).toBe(false);
        expect(await store.checkpoints(task.id)).toEqual([]);
        expect(await store.saveCheckpoint(task.id, "fetch#1", { by: "current" }, T0 + 3001, current)).toBe(true);
        expect((await store.checkpoints(task.id)).map((c) => c.value)).toEqual([{ by: "current" }]);
      });

      it("durable waits: a superseded claim registers no wait (claim_lost) and cannot park the task; the current claim parks it and its lease goes", async () => {
        if (!isWaitStore(store)) return expect(isWaitStore(store)).toBe(false);
        const { task, stale, current } = await takenOver();
        const nap: WaitRecord = {
          taskId: task.id,
          key: "$sleep#1",
          kind: "timer",
          owner: task.owner,
          eventName: null,
          dueAt: T0 + 60_000,
          afterSeq: 0,
          since: task.createdAt,
          createdAt: T0 + 3000,
        };
        await expect(store.registerWait(nap, stale)).rejects.toMatchObject({ reason: "claim_lost" });
        expect(await store.waits(task.id)).toEqual([]);
        expect(await store.registerWait(nap, current)).toBeNull();
        expect(await store.setWaitMode(task.id, "parked", stale)).toBe(false);
        expect(await store.setWaitMode(task.id, "memory", stale)).toBe(false);
        expect(await store.waitMode(task.id)).toBeNull();
        expect((await store.heldLeases("w2", T0 + 3000)).map((t) => t.id)).toEqual([task.id]);
        expect(await store.setWaitMode(task.id, "parked", current)).toBe(true);
        expect(await store.heldLeases("w2", T0 + 3000)).toEqual([]);
        expect(await store.queueDepth()).toBe(0);
        expect(await store.queuedSince(T0 + 10_000_000)).toBe(false);
        expect(await expiredIds(T0 + 10_000_000)).toEqual([]);
        expect(await store.renew("w2", [task.id], LEASE, T0 + 3001)).toEqual([]);
        // Woken, it is claimed again like a new task: a new claim, the next generation.
        expect(await store.fireDue(T0 + 60_000, 10)).toEqual([{ taskId: task.id, parked: true }]);
        const [again] = await store.claim("w3", 1, LEASE, T0 + 60_001);
        expect(again).toMatchObject({ id: task.id, claim: { workerId: "w3", generation: current.generation + 1 } });
      });

      it("durable waits: a task waiting in memory keeps its lease, renewed and reaped as any; handed back or re-queued it waits no more", async () => {
        if (!isWaitStore(store)) return expect(isWaitStore(store)).toBe(false);
        const { task, current } = await takenOver();
        expect(await store.setWaitMode(task.id, "memory", current)).toBe(true);
        expect(await store.renew("w2", [task.id], LEASE, T0 + 3000)).toEqual([task.id]);
        expect((await store.heldLeases("w2", T0 + 3000)).map((t) => [t.id, t.waitMode])).toEqual([[task.id, "memory"]]);
        expect(await store.handBack(task.id, current, T0 + 3001, "handed back")).toMatchObject({ id: task.id, status: "working" });
        expect(await store.waitMode(task.id)).toBeNull();
        const [next] = await store.claim("w3", 1, 1000, T0 + 4000);
        expect(await store.setWaitMode(task.id, "memory", next!.claim)).toBe(true);
        expect(await store.requeue(task.id, "w3", 5, T0 + 5000)).toBe(true);
        expect(await store.waitMode(task.id)).toBeNull();
      });

      it("a superseded claim cannot queue a question (claim_lost) nor abandon the current run's", async () => {
        const { task, stale, current } = await takenOver();
        const ask = { taskId: task.id, method: "elicitation/create", params: { message: "?" } };
        await expect(store.enqueueInput({ ...ask, id: "stale", createdAt: T0 + 3000 }, stale)).rejects.toMatchObject({
          reason: "claim_lost",
        });
        await store.enqueueInput({ ...ask, id: "current", createdAt: T0 + 3001 }, current);
        const abandoned: TaskOutcome = { kind: "error", error: { code: -32603, message: "Superseded" } };
        expect(await store.answerInput(task.id, "current", abandoned, stale)).toBe(false);
        expect((await store.pendingInputs(task.id)).map((i) => i.id)).toEqual(["current"]);
        expect(await store.answerInput(task.id, "current", abandoned, current)).toBe(true);
      });

      it("a claim whose lease ran out but was not taken yet still writes (the reaper's CAS and the write decide the race)", async () => {
        const task = await queued();
        const [claimed] = await store.claim("w1", 1, 1000, T0);
        const done = await store.transition(task.id, allowedSources("completed"), "completed", {
          now: T0 + 5000,
          outcome: RESULT,
          claim: claimed!.claim,
        });
        expect(done?.status).toBe("completed");
        expect(await store.failExpired(task.id, "w1", T0 + 5001, "lost", LOST)).toBeNull();
      });

      it("after the reaper failed the task, the late outcome is not stored", async () => {
        const task = await queued();
        const [claimed] = await store.claim("w1", 1, 1000, T0);
        expect(await store.failExpired(task.id, "w1", T0 + 1000, "lost", LOST)).not.toBeNull();
        expect(
          await store.transition(task.id, allowedSources("completed"), "completed", {
            now: T0 + 1001,
            outcome: RESULT,
            claim: claimed!.claim,
          }),
        ).toBeNull();
        expect(await store.get(task.id, { any: true })).toMatchObject({ status: "failed", outcome: LOST });
      });

      it("a claimed write never moves updatedAt back, whatever time the worker's clock says", async () => {
        const task = await queued({ createdAt: Date.now() + 60_000 });
        const [claimed] = await store.claim("w1", 1, LEASE, T0);
        await store.annotate(task.id, { progress: { progress: 1 }, now: T0, claim: claimed!.claim });
        const after = await store.get(task.id, { any: true });
        expect(after!.updatedAt).toBeGreaterThanOrEqual(task.updatedAt);
        const done = await store.transition(task.id, allowedSources("completed"), "completed", {
          now: T0,
          outcome: RESULT,
          claim: claimed!.claim,
        });
        expect(done!.updatedAt).toBeGreaterThanOrEqual(after!.updatedAt);
      });

      it("a claim's questions stay in the order they were queued, whatever time the worker's clock says", async () => {
        const task = await queued();
        const [claimed] = await store.claim("w1", 1, LEASE, T0);
        const ask = { taskId: task.id, method: "elicitation/create", params: { message: "?" } };
        await store.enqueueInput({ ...ask, id: "first", createdAt: Date.now() + 3_600_000 }, claimed!.claim);
        // A clock far behind, as on a worker that took the task over from one whose clock is ahead.
        await store.enqueueInput({ ...ask, id: "second", createdAt: T0 }, claimed!.claim);
        expect((await store.pendingInputs(task.id)).map((input) => input.id)).toEqual(["first", "second"]);
      });

      it("a claim's checkpoints stay in the order they were saved, whatever time the worker's clock says", async () => {
        if (!isCheckpointStore(store)) return;
        const task = await queued();
        const [claimed] = await store.claim("w1", 1, LEASE, T0);
        expect(await store.saveCheckpoint(task.id, "fetch#1", 1, Date.now() + 3_600_000, claimed!.claim)).toBe(true);
        expect(await store.saveCheckpoint(task.id, "fetch#2", 2, T0, claimed!.claim)).toBe(true);
        expect((await store.checkpoints(task.id)).map((checkpoint) => checkpoint.name)).toEqual(["fetch#1", "fetch#2"]);
      });

      it("concurrent: the stale and the current claim's outcomes race, and the current one's is the one kept", async () => {
        const { task, stale, current } = await takenOver();
        const late: TaskOutcome = { kind: "result", value: { by: "stale" } };
        const mine: TaskOutcome = { kind: "result", value: { by: "current" } };
        const [a, b] = await Promise.all([
          store.transition(task.id, allowedSources("completed"), "completed", { now: T0 + 3000, outcome: late, claim: stale }),
          store.transition(task.id, allowedSources("completed"), "completed", { now: T0 + 3000, outcome: mine, claim: current }),
        ]);
        expect(a).toBeNull();
        expect(b?.outcome).toEqual(mine);
      });
    });

    describe("queueDepth", () => {
      it("counts unclaimed working tasks only", async () => {
        expect(await store.queueDepth()).toBe(0);
        await queued();
        await queued();
        await queued();
        await unclaimedIn("input_required");
        for (const status of TERMINAL_STATUSES) await unclaimedIn(status);
        expect(await store.queueDepth()).toBe(3);
        await store.claim("w1", 2, LEASE, T0);
        expect(await store.queueDepth()).toBe(1);
      });
    });

    describe("heartbeat, retire and clusterView (the operator's view)", () => {
      const beat = (workerId: string, now: number, overrides: Partial<WorkerBeat> = {}): Promise<string[]> =>
        store.heartbeat({ workerId, startedAt: T0, concurrency: 4, leaseMs: LEASE, ...overrides }, now);

      it("lists a worker from its first beat with what it said; later beats move heartbeatAt only, never back", async () => {
        await beat("w1", T0 + 10);
        expect((await store.clusterView(T0 + 20)).workers).toEqual([
          { workerId: "w1", startedAt: T0, heartbeatAt: T0 + 10, concurrency: 4, leaseMs: LEASE, running: 0 },
        ]);
        await beat("w1", T0 + 500, { startedAt: T0 + 400, concurrency: 8 });
        await beat("w1", T0 + 300);
        expect((await store.clusterView(T0 + 600)).workers).toEqual([
          { workerId: "w1", startedAt: T0, heartbeatAt: T0 + 500, concurrency: 4, leaseMs: LEASE, running: 0 },
        ]);
      });

      it("lists only workers whose last beat is younger than their lease, oldest start first; a new beat brings one back", async () => {
        await beat("late", T0, { startedAt: T0 + 5 });
        await beat("early", T0, { startedAt: T0 + 1, leaseMs: 1000 });
        const ids = async (now: number) => (await store.clusterView(now)).workers.map((w) => w.workerId);
        expect(await ids(T0 + 999)).toEqual(["early", "late"]);
        expect(await ids(T0 + 1000)).toEqual(["late"]);
        expect(await ids(T0 + LEASE)).toEqual([]);
        await beat("early", T0 + LEASE);
        expect(await ids(T0 + LEASE + 1)).toEqual(["early"]);
      });

      it("a beat answers the workers alive, itself included, oldest start first (the order the worker pool wakes them in)", async () => {
        expect(await beat("late", T0, { startedAt: T0 + 5 })).toEqual(["late"]);
        await beat("gone", T0, { startedAt: T0, leaseMs: 100 });
        expect(await beat("early", T0 + 100, { startedAt: T0 + 1 })).toEqual(["early", "late"]);
        expect(await beat("late", T0 + 200)).toEqual(["early", "late"]);
      });

      it("retire removes a worker at once; retiring an unknown one is a no-op", async () => {
        await beat("w1", T0);
        await beat("w2", T0);
        await store.retire("w1");
        await store.retire("nobody");
        expect((await store.clusterView(T0 + 1)).workers.map((w) => w.workerId)).toEqual(["w2"]);
      });

      it("a beat drops the rows of workers gone for over an hour, which a new beat of theirs re-creates with a new start", async () => {
        await beat("gone", T0, { leaseMs: 1000 });
        const later = T0 + 1000 + 60 * 60 * 1000 + 1;
        await beat("w2", later);
        await beat("gone", later + 1, { startedAt: later });
        expect((await store.clusterView(later + 2)).workers.find((w) => w.workerId === "gone")?.startedAt).toBe(later);
      });

      it("lists each held lease — task, tool, status, worker, since the claim, expiry, attempts — soonest expiry first, and counts them per worker", async () => {
        await beat("w1", T0);
        await beat("w2", T0);
        const a = await leasedTo("w1", T0 + 10, LEASE, { name: "render" });
        const b = await leasedTo("w2", T0 + 20, 5000, { name: "export" });
        const c = await leasedTo("w1", T0 + 30, LEASE, { name: "render" });
        await store.transition(c.id, allowedSources("input_required"), "input_required", { now: T0 + 31 });
        await store.renew("w1", [a.id], LEASE, T0 + 40);
        await queued();
        const view = await store.clusterView(T0 + 50);
        expect(view.leases).toEqual([
          { taskId: b.id, name: "export", status: "working", workerId: "w2", since: T0 + 20, expiresAt: T0 + 5020, attempts: 1 },
          {
            taskId: c.id,
            name: "render",
            status: "input_required",
            workerId: "w1",
            since: T0 + 30,
            expiresAt: T0 + 30 + LEASE,
            attempts: 1,
          },
          { taskId: a.id, name: "render", status: "working", workerId: "w1", since: T0 + 10, expiresAt: T0 + 40 + LEASE, attempts: 1 },
        ]);
        expect(view.leasesTruncated).toBe(false);
        expect(view.queueDepth).toBe(1);
        expect(view.workers.map((w) => [w.workerId, w.running])).toEqual([
          ["w1", 2],
          ["w2", 1],
        ]);
      });

      it("a lease ends with its run: released, completed, handed back or re-queued, it is no longer listed; an expired one stays until reaped", async () => {
        const done = await leasedTo("w1");
        const released = await leasedTo("w1");
        const handed = await leasedTo("w1");
        const lost = await leasedTo("w1", T0, 1000);
        await store.transition(done.id, allowedSources("completed"), "completed", { now: T0 + 1, outcome: RESULT });
        await store.release(released.id, released.claim);
        await store.handBack(handed.id, handed.claim, T0 + 2, "handed back");
        expect((await store.clusterView(T0 + 5000)).leases.map((l) => l.taskId)).toEqual([lost.id]);
        await store.requeue(lost.id, "w1", 3, T0 + 5000);
        expect((await store.clusterView(T0 + 5001)).leases).toEqual([]);
      });

      it("leaseLimit bounds the leases listed and says so; a re-claim starts a new since", async () => {
        const first = await leasedTo("w1", T0, 1000);
        await leasedTo("w1", T0 + 1);
        await leasedTo("w1", T0 + 2);
        const view = await store.clusterView(T0 + 3, { leaseLimit: 2 });
        expect(view.leases).toHaveLength(2);
        expect(view.leasesTruncated).toBe(true);
        expect((await store.clusterView(T0 + 3, { leaseLimit: 3 })).leasesTruncated).toBe(false);
        await store.requeue(first.id, "w1", 3, T0 + 2000);
        await store.claim("w2", 1, LEASE, T0 + 2500);
        expect((await store.clusterView(T0 + 2600)).leases.find((l) => l.taskId === first.id)).toMatchObject({
          workerId: "w2",
          since: T0 + 2500,
          attempts: 2,
        });
      });
    });
    describe("the timeline names the worker that held the task (the node of each run)", () => {
      it("the creation names none; a worker's outcome names that worker, one at a time or written together", async () => {
        const one = await leasedTo("w1");
        const many = [await leasedTo("w2"), await leasedTo("w2"), await leasedTo("w2")];
        await store.transition(one.id, allowedSources("completed"), "completed", { now: T0 + 1, outcome: RESULT, claim: one.claim });
        await Promise.all(
          many.map((task) =>
            store.transition(task.id, allowedSources("completed"), "completed", { now: T0 + 1, outcome: RESULT, claim: task.claim }),
          ),
        );
        const first = await store.history(one.id);
        expect(first[0]).not.toHaveProperty("node");
        expect(first.at(-1)).toMatchObject({ status: "completed", node: "w1" });
        for (const task of many) expect((await store.history(task.id)).at(-1)).toMatchObject({ status: "completed", node: "w2" });
      });

      it("a change written by another node while a worker holds the task (a cancel) names the worker holding it", async () => {
        const task = await leasedTo("w1");
        await store.transition(task.id, allowedSources("cancelled"), "cancelled", {
          now: T0 + 1,
          statusMessage: "cancelled by the requestor",
        });
        expect((await store.history(task.id)).at(-1)).toMatchObject({ status: "cancelled", node: "w1" });
      });

      it("a change to a task no worker holds names none", async () => {
        const task = await queued();
        await store.transition(task.id, allowedSources("cancelled"), "cancelled", { now: T0 + 1 });
        expect((await store.history(task.id)).at(-1)).not.toHaveProperty("node");
      });

      it("the reaper's re-queue and failure, and a drain's hand-back, name the worker whose run ended", async () => {
        const requeued = await leasedTo("w1", T0, 1000);
        const failed = await leasedTo("w2", T0, 1000);
        const handed = await leasedTo("w3");
        await store.requeue(requeued.id, "w1", 3, T0 + 1000);
        await store.failExpired(failed.id, "w2", T0 + 1000, "worker lost", LOST);
        await store.handBack(handed.id, handed.claim, T0 + 2, "handed back");
        expect((await store.history(requeued.id)).at(-1)?.node).toBe("w1");
        expect((await store.history(failed.id)).at(-1)?.node).toBe("w2");
        expect((await store.history(handed.id)).at(-1)?.node).toBe("w3");
        // The next run is another worker's.
        const [again] = await store.claim("w4", 1, LEASE, T0 + 2000);
        expect(again?.id).toBe(requeued.id);
        await store.transition(requeued.id, allowedSources("completed"), "completed", {
          now: T0 + 2001,
          outcome: RESULT,
          claim: again!.claim,
        });
        expect((await store.history(requeued.id)).map((change) => change.node)).toEqual([undefined, "w1", "w4"]);
      });
    });
  });
}
