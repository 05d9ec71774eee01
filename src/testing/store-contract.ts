/**
 * The one behavioural contract of {@link TaskStore}. Every implementation runs this suite
 * unchanged, so a runtime written against one store behaves the same on any other.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { newTaskId } from "../core/task-id.js";
import { ACTIVE_STATUSES, TASK_STATUSES, TERMINAL_STATUSES, allowedSources, canTransition, type TaskStatus } from "../core/task-status.js";
import type { NewTask, TaskOutcome, TaskRecord } from "../core/task.js";
import type { TaskFilter, TaskStore } from "../store/task-store.js";
import { isCheckpointStore, type CheckpointStore } from "../store/checkpoint-store.js";
import { queueContract } from "./queue-contract.js";
import { toolPauseContract } from "./tool-pause-contract.js";
import { waitContract } from "./wait-contract.js";

const T0 = 1_700_000_000_000;

/** A valid new task; ids are fresh UUIDs like the runtime's (T-ID-1). */
export function newTask(overrides: Partial<NewTask> = {}): NewTask {
  return {
    id: newTaskId(),
    owner: "alice",
    method: "tools/call",
    name: "slow-tool",
    request: { name: "slow-tool", arguments: { n: 3, nested: { list: [1, "two", null] } } },
    origin: { sessionId: "session-1", progressToken: "tok-1", accepts: ["elicitation/create"] },
    createdAt: T0,
    ttlMs: 60_000,
    pollIntervalMs: 1000,
    retryable: false,
    ...overrides,
  };
}

const RESULT: TaskOutcome = { kind: "result", value: { content: [{ type: "text", text: "done" }], isError: false } };
const RPC_ERROR: TaskOutcome = {
  kind: "error",
  error: { code: -32042, message: "Upstream refused", data: { retryAfterMs: 250, reasons: ["quota", "policy"] } },
};

/**
 * Registers the {@link TaskStore} contract suite in vitest under `name`: `make` returns a fresh,
 * empty store for each test (closed after it). It includes the run queue's order and caps, and
 * the checkpoint cases run on a store that is a CheckpointStore.
 */
export function storeContract(name: string, make: () => Promise<TaskStore> | TaskStore): void {
  describe(`${name}: TaskStore contract`, () => {
    let store: TaskStore;

    beforeEach(async () => {
      store = await make();
    });

    afterEach(async () => {
      await store.close();
    });

    /** Creates a task and walks it along legal moves to `status`. */
    async function taskIn(status: TaskStatus, overrides: Partial<NewTask> = {}): Promise<TaskRecord> {
      const created = await store.create(newTask(overrides));
      if (status === "working") return created;
      const moved = await store.transition(created.id, allowedSources(status), status, { now: T0 + 1 });
      if (moved === null) throw new Error(`could not move a new task to ${status}`);
      return moved;
    }

    describe("create", () => {
      it("T-LIFE-1: a new task starts in working, with no message, outcome or progress", async () => {
        const task = newTask();
        const created = await store.create(task);
        expect(created).toEqual({
          ...task,
          status: "working",
          statusMessage: null,
          updatedAt: task.createdAt,
          expiresAt: task.createdAt + 60_000,
          outcome: null,
          progress: null,
        });
        expect(await store.get(task.id, { any: true })).toEqual(created);
      });

      it("T-TTL-4: expiresAt is createdAt + ttlMs, and null for an unlimited ttl", async () => {
        const limited = await store.create(newTask({ ttlMs: 5000 }));
        const unlimited = await store.create(newTask({ ttlMs: null }));
        expect(limited.expiresAt).toBe(T0 + 5000);
        expect(unlimited.expiresAt).toBeNull();
        expect(unlimited.ttlMs).toBeNull();
      });

      it("keeps request, origin, pollInterval, retryable and owner as given", async () => {
        const task = newTask({ owner: null, pollIntervalMs: null, retryable: true, request: [1, { a: "ü" }] });
        await store.create(task);
        const read = await store.get(task.id, { any: true });
        expect(read).toMatchObject({
          owner: null,
          pollIntervalMs: null,
          retryable: true,
          request: [1, { a: "ü" }],
          origin: task.origin,
        });
      });

      it("T-ID-1: rejects a duplicate id and keeps the first task", async () => {
        const first = await store.create(newTask({ name: "first" }));
        await expect(store.create(newTask({ id: first.id, name: "second" }))).rejects.toThrow(/already exists/);
        expect((await store.get(first.id, { any: true }))?.name).toBe("first");
      });

      it("stored state cannot be changed through the objects passed in or handed out", async () => {
        const task = newTask();
        const created = await store.create(task);
        (task.request as { name: string }).name = "mutated input";
        task.origin.accepts.push("sampling/createMessage");
        created.status = "completed";
        (created.request as { name: string }).name = "mutated output";
        const read = await store.get(task.id, { any: true });
        expect(read?.status).toBe("working");
        expect(read?.request).toEqual(newTask().request);
        expect(read?.origin.accepts).toEqual(["elicitation/create"]);
      });
    });

    describe("get and owner scope (T-SEC-1, T-SEC-3)", () => {
      it("returns null for an unknown id", async () => {
        expect(await store.get(newTaskId(), { any: true })).toBeNull();
      });

      it("finds a task within its owner's scope", async () => {
        const task = await taskIn("working", { owner: "alice" });
        expect((await store.get(task.id, { owner: "alice" }))?.id).toBe(task.id);
      });

      it("T-SEC-3: hides a task from a foreign owner", async () => {
        const task = await taskIn("working", { owner: "alice" });
        expect(await store.get(task.id, { owner: "mallory" })).toBeNull();
        expect(await store.get(task.id, { owner: null })).toBeNull();
      });

      it("a null owner scope matches only tasks created without an owner", async () => {
        const anonymous = await taskIn("working", { owner: null });
        expect((await store.get(anonymous.id, { owner: null }))?.id).toBe(anonymous.id);
        expect(await store.get(anonymous.id, { owner: "alice" })).toBeNull();
      });

      it("T-ERR-1: returns null, not an error, for an id containing U+0000 (PostgreSQL text cannot hold it)", async () => {
        const task = await taskIn("working", { owner: "alice" });
        expect(await store.get(`${task.id}\u0000`, { owner: "alice" })).toBeNull();
        expect(await store.get("\u0000", { any: true })).toBeNull();
      });

      it("T-SEC-1: an owner key containing U+0000 (a token's subject may) still reaches its own task", async () => {
        const task = await taskIn("working", { owner: "iss|a\u0000b" });
        expect((await store.get(task.id, { owner: "iss|a\u0000b" }))?.id).toBe(task.id);
      });

      it("scope { any: true } sees tasks of every owner", async () => {
        const owned = await taskIn("working", { owner: "alice" });
        const anonymous = await taskIn("working", { owner: null });
        expect((await store.get(owned.id, { any: true }))?.id).toBe(owned.id);
        expect((await store.get(anonymous.id, { any: true }))?.id).toBe(anonymous.id);
      });
    });

    describe("transition (compare-and-set)", () => {
      const legalMoves = ACTIVE_STATUSES.flatMap((from) =>
        TASK_STATUSES.filter((to) => canTransition(from, to)).map((to) => [from, to] as const),
      );

      it.each(legalMoves)("T-LIFE-2: moves %s → %s with allowedSources", async (from, to) => {
        const task = await taskIn(from);
        const moved = await store.transition(task.id, allowedSources(to), to, { now: T0 + 2 });
        expect(moved?.status).toBe(to);
        expect((await store.get(task.id, { any: true }))?.status).toBe(to);
      });

      it.each(TERMINAL_STATUSES)("T-LIFE-3: a %s task never moves again", async (terminal) => {
        const task = await taskIn(terminal);
        for (const to of TASK_STATUSES) {
          expect(await store.transition(task.id, allowedSources(to), to, { now: T0 + 5, statusMessage: "late" })).toBeNull();
        }
        expect(await store.get(task.id, { any: true })).toEqual(task);
      });

      it("T-LIFE-3: a terminal task stays put even when the caller lists its status in `from`", async () => {
        const task = await taskIn("completed");
        expect(await store.transition(task.id, ["completed"], "working", { now: T0 + 5 })).toBeNull();
        expect(await store.transition(task.id, TASK_STATUSES, "failed", { now: T0 + 5 })).toBeNull();
        expect((await store.get(task.id, { any: true }))?.status).toBe("completed");
      });

      it("refuses a move whose current status is not in `from`, writing nothing", async () => {
        const task = await taskIn("working");
        expect(await store.transition(task.id, ["input_required"], "working", { now: T0 + 5, statusMessage: "x" })).toBeNull();
        expect(await store.get(task.id, { any: true })).toEqual(task);
      });

      it("returns null for an unknown task", async () => {
        expect(await store.transition(newTaskId(), allowedSources("completed"), "completed", { now: T0 })).toBeNull();
      });

      it("T-CANCEL-4: a late completed does not overwrite cancelled", async () => {
        const task = await taskIn("working");
        const cancelled = await store.transition(task.id, allowedSources("cancelled"), "cancelled", {
          now: T0 + 10,
          statusMessage: "Cancelled by requestor",
        });
        const late = await store.transition(task.id, allowedSources("completed"), "completed", { now: T0 + 20, outcome: RESULT });
        expect(late).toBeNull();
        const stored = await store.get(task.id, { any: true });
        expect(stored).toEqual(cancelled);
        expect(stored?.outcome).toBeNull();
      });

      it("racing completed and cancelled transitions: exactly one wins and its write is what is stored", async () => {
        for (let round = 0; round < 10; round++) {
          const task = await taskIn(round % 2 === 0 ? "working" : "input_required");
          const [completed, cancelled] = await Promise.all([
            store.transition(task.id, allowedSources("completed"), "completed", { now: T0 + 30, outcome: RESULT }),
            store.transition(task.id, allowedSources("cancelled"), "cancelled", { now: T0 + 30 }),
          ]);
          const winners = [completed, cancelled].filter((r) => r !== null);
          expect(winners).toHaveLength(1);
          expect(await store.get(task.id, { any: true })).toEqual(winners[0]);
        }
      });

      it("sets updatedAt to patch.now and keeps createdAt", async () => {
        const task = await taskIn("working");
        const moved = await store.transition(task.id, allowedSources("input_required"), "input_required", { now: T0 + 777 });
        expect(moved?.updatedAt).toBe(T0 + 777);
        expect(moved?.createdAt).toBe(T0);
      });

      it("T-RES-2: a result outcome round-trips with the terminal transition", async () => {
        const task = await taskIn("working");
        await store.transition(task.id, allowedSources("completed"), "completed", { now: T0 + 3, outcome: RESULT });
        expect((await store.get(task.id, { any: true }))?.outcome).toEqual(RESULT);
      });

      it("T-RES-4: a JSON-RPC error outcome round-trips with code, message and data", async () => {
        const task = await taskIn("working");
        await store.transition(task.id, allowedSources("failed"), "failed", { now: T0 + 3, outcome: RPC_ERROR });
        const stored = await store.get(task.id, { any: true });
        expect(stored?.outcome).toEqual(RPC_ERROR);
        expect(stored?.status).toBe("failed");
      });

      it("an outcome is refused with a non-terminal status", async () => {
        const task = await taskIn("working");
        await expect(
          store.transition(task.id, allowedSources("input_required"), "input_required", { now: T0 + 3, outcome: RESULT }),
        ).rejects.toThrow(/terminal/);
        expect(await store.get(task.id, { any: true })).toEqual(task);
      });

      it("T-LIFE-5: statusMessage undefined keeps the current message", async () => {
        const task = await taskIn("working");
        await store.transition(task.id, allowedSources("input_required"), "input_required", {
          now: T0 + 1,
          statusMessage: "Need a file name",
        });
        const moved = await store.transition(task.id, allowedSources("working"), "working", { now: T0 + 2 });
        expect(moved?.statusMessage).toBe("Need a file name");
      });

      it("T-LIFE-5: statusMessage null clears the message", async () => {
        const task = await taskIn("working");
        await store.transition(task.id, allowedSources("input_required"), "input_required", {
          now: T0 + 1,
          statusMessage: "Need a file name",
        });
        const moved = await store.transition(task.id, allowedSources("working"), "working", { now: T0 + 2, statusMessage: null });
        expect(moved?.statusMessage).toBeNull();
      });

      it("T-LIFE-4: statusMessage given with a terminal status is stored with it", async () => {
        const task = await taskIn("working");
        const failed = await store.transition(task.id, allowedSources("failed"), "failed", {
          now: T0 + 1,
          statusMessage: "Tool reported isError",
          outcome: RESULT,
        });
        expect(failed?.statusMessage).toBe("Tool reported isError");
        expect((await store.get(task.id, { any: true }))?.statusMessage).toBe("Tool reported isError");
      });

      it("T-LIFE-4: stores a statusMessage containing U+0000 (PostgreSQL: U+FFFD in its place) instead of failing the transition", async () => {
        const task = await taskIn("working");
        const failed = await store.transition(task.id, allowedSources("failed"), "failed", {
          now: T0 + 1,
          statusMessage: "bad\u0000byte",
          outcome: RESULT,
        });
        expect(failed?.status).toBe("failed");
        expect(["bad\u0000byte", "bad\ufffdbyte"]).toContain((await store.get(task.id, { any: true }))?.statusMessage);
      });
    });

    describe("annotate", () => {
      it("T-PROG-1: records progress without changing the status", async () => {
        const task = await taskIn("working");
        expect(await store.annotate(task.id, { progress: { progress: 3, total: 10, message: "3 of 10" }, now: T0 + 9 })).toBe(true);
        const stored = await store.get(task.id, { any: true });
        expect(stored?.progress).toEqual({ progress: 3, total: 10, message: "3 of 10" });
        expect(stored?.status).toBe("working");
        expect(stored?.updatedAt).toBe(T0 + 9);
      });

      it("keeps the last progress when only the message changes", async () => {
        const task = await taskIn("input_required");
        await store.annotate(task.id, { progress: { progress: 1 }, now: T0 + 2 });
        await store.annotate(task.id, { statusMessage: "halfway", now: T0 + 3 });
        const stored = await store.get(task.id, { any: true });
        expect(stored?.progress).toEqual({ progress: 1 });
        expect(stored?.statusMessage).toBe("halfway");
        expect(stored?.status).toBe("input_required");
      });

      it("statusMessage undefined keeps the message and null clears it", async () => {
        const task = await taskIn("working");
        await store.annotate(task.id, { statusMessage: "busy", now: T0 + 2 });
        await store.annotate(task.id, { progress: { progress: 2 }, now: T0 + 3 });
        expect((await store.get(task.id, { any: true }))?.statusMessage).toBe("busy");
        await store.annotate(task.id, { statusMessage: null, now: T0 + 4 });
        expect((await store.get(task.id, { any: true }))?.statusMessage).toBeNull();
      });

      it.each(TERMINAL_STATUSES)("T-LIFE-3: leaves a %s task untouched and returns false", async (terminal) => {
        const task = await taskIn(terminal);
        expect(await store.annotate(task.id, { statusMessage: "late", progress: { progress: 9 }, now: T0 + 50 })).toBe(false);
        expect(await store.get(task.id, { any: true })).toEqual(task);
      });

      it("returns false for an unknown task", async () => {
        expect(await store.annotate(newTaskId(), { statusMessage: "x", now: T0 })).toBe(false);
      });

      it("appends a timeline entry only when asked (timeline: a run's mark), with the status unchanged", async () => {
        const task = await taskIn("working");
        const before = await store.history(task.id);
        await store.annotate(task.id, { statusMessage: "a progress note", now: T0 + 2 });
        expect(await store.history(task.id)).toEqual(before);
        expect(await store.annotate(task.id, { statusMessage: "Re-run after a server restart", now: T0 + 3, timeline: true })).toBe(true);
        expect(await store.history(task.id)).toEqual([
          ...before,
          { status: "working", statusMessage: "Re-run after a server restart", at: T0 + 3 },
        ]);
      });

      it("appends no timeline entry when it writes nothing (a finished task)", async () => {
        const task = await taskIn("completed");
        const before = await store.history(task.id);
        expect(await store.annotate(task.id, { statusMessage: "late", now: T0 + 50, timeline: true })).toBe(false);
        expect(await store.history(task.id)).toEqual(before);
      });
    });

    describe("list (T-LIST, keyset over (createdAt, id))", () => {
      async function walk(owner: string | null, pageSize: number): Promise<{ pages: number; ids: string[] }> {
        const ids: string[] = [];
        let after: { createdAt: number; id: string } | null = null;
        for (let pages = 1; ; pages++) {
          const page: TaskRecord[] = await store.list(owner, after, pageSize);
          expect(page.length).toBeLessThanOrEqual(pageSize);
          ids.push(...page.map((t) => t.id));
          const last = page.at(-1);
          if (page.length < pageSize || last === undefined) return { pages, ids };
          after = { createdAt: last.createdAt, id: last.id };
        }
      }

      it("T-LIST-2: walks 25 tasks with equal createdAt in id order, with no duplicates or gaps", async () => {
        const ids: string[] = [];
        for (let i = 0; i < 25; i++) ids.push((await taskIn(TASK_STATUSES[i % 5] ?? "working", { createdAt: T0 })).id);
        const { pages, ids: seen } = await walk("alice", 10);
        expect(pages).toBe(3);
        expect(seen).toEqual([...ids].sort());
      });

      it("orders by createdAt before id", async () => {
        const late = await taskIn("working", { id: "00000000-0000-4000-8000-000000000001", createdAt: T0 + 100 });
        const early = await taskIn("working", { id: "ffffffff-ffff-4fff-bfff-ffffffffffff", createdAt: T0 });
        const page = await store.list("alice", null, 10);
        expect(page.map((t) => t.id)).toEqual([early.id, late.id]);
      });

      it("T-SEC-3: returns only the owner's tasks; null lists only tasks without an owner", async () => {
        const alice = [await taskIn("working", { owner: "alice" }), await taskIn("completed", { owner: "alice" })];
        const bob = await taskIn("working", { owner: "bob" });
        const anonymous = await taskIn("failed", { owner: null });
        expect((await walk("alice", 1)).ids.sort()).toEqual(alice.map((t) => t.id).sort());
        expect((await walk("bob", 10)).ids).toEqual([bob.id]);
        expect((await walk(null, 10)).ids).toEqual([anonymous.id]);
        expect((await walk("carol", 10)).ids).toEqual([]);
      });

      it("returns an empty page after the last task", async () => {
        const task = await taskIn("working");
        expect(await store.list("alice", { createdAt: task.createdAt, id: task.id }, 10)).toEqual([]);
      });

      it("is stable under concurrent inserts: new tasks appear after the cursor, old positions are not revisited", async () => {
        const first = [] as string[];
        for (let i = 0; i < 4; i++) first.push((await taskIn("working", { createdAt: T0 + i })).id);
        const page1 = await store.list("alice", null, 2);
        const cursor = page1.at(-1);
        if (cursor === undefined) throw new Error("empty first page");
        // Inserted mid-walk: one behind the cursor (must not show up), one ahead (must).
        await taskIn("working", { createdAt: T0 - 1 });
        const ahead = await taskIn("working", { createdAt: T0 + 10 });
        const rest = await store.list("alice", { createdAt: cursor.createdAt, id: cursor.id }, 10);
        expect([...page1, ...rest].map((t) => t.id)).toEqual([...first, ahead.id]);
      });

      it("a limit of 0 returns an empty page", async () => {
        await taskIn("working");
        expect(await store.list("alice", null, 0)).toEqual([]);
      });
    });

    describe("input requests (T-INPUT)", () => {
      const ask = (taskId: string, id: string, createdAt = T0 + 1) => ({
        taskId,
        id,
        method: "elicitation/create",
        params: { message: `question ${id}`, requestedSchema: { type: "object", properties: {} } },
        createdAt,
      });
      const ANSWER: TaskOutcome = { kind: "result", value: { action: "accept", content: { name: "x" } } };

      it("queued requests are pending, oldest first, ties in queue order", async () => {
        const task = await taskIn("input_required");
        await store.enqueueInput(ask(task.id, "b", T0 + 5));
        await store.enqueueInput(ask(task.id, "c", T0 + 1));
        await store.enqueueInput(ask(task.id, "a", T0 + 5));
        const pending = await store.pendingInputs(task.id);
        expect(pending.map((i) => i.id)).toEqual(["c", "b", "a"]);
        expect(pending[0]).toEqual({ ...ask(task.id, "c", T0 + 1), answer: null });
      });

      it("an answered request is no longer pending", async () => {
        const task = await taskIn("input_required");
        await store.enqueueInput(ask(task.id, "q1"));
        await store.enqueueInput(ask(task.id, "q2"));
        await store.answerInput(task.id, "q1", ANSWER);
        expect((await store.pendingInputs(task.id)).map((i) => i.id)).toEqual(["q2"]);
      });

      it("an answer is recorded once; a second answer is refused and does not overwrite", async () => {
        const task = await taskIn("input_required");
        await store.enqueueInput(ask(task.id, "q1"));
        expect(await store.answerInput(task.id, "q1", ANSWER)).toBe(true);
        expect(await store.answerInput(task.id, "q1", RPC_ERROR)).toBe(false);
        expect((await store.getInput(task.id, "q1"))?.answer).toEqual(ANSWER);
      });

      it("a JSON-RPC error answer round-trips", async () => {
        const task = await taskIn("input_required");
        await store.enqueueInput(ask(task.id, "q1"));
        await store.answerInput(task.id, "q1", RPC_ERROR);
        expect((await store.getInput(task.id, "q1"))?.answer).toEqual(RPC_ERROR);
      });

      it("answering an unknown request returns false", async () => {
        const task = await taskIn("input_required");
        expect(await store.answerInput(task.id, "nope", ANSWER)).toBe(false);
        expect(await store.answerInput(newTaskId(), "nope", ANSWER)).toBe(false);
      });

      it("getInput returns the request as queued, and null for an unknown one", async () => {
        const task = await taskIn("input_required");
        await store.enqueueInput(ask(task.id, "q1"));
        expect(await store.getInput(task.id, "q1")).toEqual({ ...ask(task.id, "q1"), answer: null });
        expect(await store.getInput(task.id, "q2")).toBeNull();
      });

      it("queues are per task: the same input id may exist in two tasks", async () => {
        const one = await taskIn("input_required");
        const two = await taskIn("input_required");
        await store.enqueueInput(ask(one.id, "q"));
        await store.enqueueInput(ask(two.id, "q"));
        await store.answerInput(one.id, "q", ANSWER);
        expect(await store.pendingInputs(one.id)).toEqual([]);
        expect((await store.pendingInputs(two.id)).map((i) => i.taskId)).toEqual([two.id]);
      });

      it("rejects a duplicate input id within a task", async () => {
        const task = await taskIn("input_required");
        await store.enqueueInput(ask(task.id, "q1"));
        await expect(store.enqueueInput(ask(task.id, "q1", T0 + 9))).rejects.toThrow(/already exists/);
        expect((await store.getInput(task.id, "q1"))?.createdAt).toBe(T0 + 1);
      });

      it("rejects a request for an unknown task", async () => {
        await expect(store.enqueueInput(ask(newTaskId(), "q1"))).rejects.toThrow(/does not exist/);
      });

      it("a task with no queue has no pending requests", async () => {
        const task = await taskIn("working");
        expect(await store.pendingInputs(task.id)).toEqual([]);
      });
    });

    describe("expiry (T-TTL-5, T-TTL-7)", () => {
      it("expiredActive returns non-terminal tasks whose expiresAt ≤ now, most overdue first, at most limit", async () => {
        const a = await taskIn("working", { ttlMs: 300 });
        const b = await taskIn("input_required", { ttlMs: 100 });
        const c = await taskIn("working", { ttlMs: 200 });
        await taskIn("working", { ttlMs: 5000 });
        expect((await store.expiredActive(T0 + 300, 10)).map((t) => t.id)).toEqual([b.id, c.id, a.id]);
        expect((await store.expiredActive(T0 + 300, 2)).map((t) => t.id)).toEqual([b.id, c.id]);
      });

      it("expiredActive ignores terminal and unlimited tasks", async () => {
        for (const status of TERMINAL_STATUSES) await taskIn(status, { ttlMs: 10 });
        await taskIn("working", { ttlMs: null });
        expect(await store.expiredActive(T0 + 1_000_000, 10)).toEqual([]);
      });

      it("deleteExpired deletes only expired terminal tasks, in batches of limit", async () => {
        const doomed: string[] = [];
        for (let i = 0; i < 5; i++) doomed.push((await taskIn(TERMINAL_STATUSES[i % 3] ?? "completed", { ttlMs: 100 + i })).id);
        const activeExpired = await taskIn("working", { ttlMs: 50 });
        const terminalAlive = await taskIn("completed", { ttlMs: 100_000 });
        const unlimited = await taskIn("completed", { ttlMs: null });

        expect((await store.deleteExpired(T0 + 1000, 2)).deleted).toBe(2);
        expect((await store.deleteExpired(T0 + 1000, 2)).deleted).toBe(2);
        expect((await store.deleteExpired(T0 + 1000, 2)).deleted).toBe(1);
        expect((await store.deleteExpired(T0 + 1000, 2)).deleted).toBe(0);

        for (const id of doomed) expect(await store.get(id, { any: true })).toBeNull();
        for (const kept of [activeExpired, terminalAlive, unlimited]) {
          expect((await store.get(kept.id, { any: true }))?.id).toBe(kept.id);
        }
      });

      it("deleteExpired deletes the oldest deadlines first", async () => {
        const later = await taskIn("completed", { ttlMs: 200 });
        const sooner = await taskIn("failed", { ttlMs: 100 });
        expect((await store.deleteExpired(T0 + 500, 1)).deleted).toBe(1);
        expect(await store.get(sooner.id, { any: true })).toBeNull();
        expect(await store.get(later.id, { any: true })).not.toBeNull();
      });

      it("deleteExpired deletes the input queue of every deleted task", async () => {
        const task = await taskIn("input_required", { ttlMs: 100 });
        await store.enqueueInput({ taskId: task.id, id: "q1", method: "sampling/createMessage", params: {}, createdAt: T0 });
        await store.transition(task.id, allowedSources("cancelled"), "cancelled", { now: T0 + 2 });
        expect((await store.deleteExpired(T0 + 100, 10)).deleted).toBe(1);
        expect(await store.getInput(task.id, "q1")).toBeNull();
        expect(await store.pendingInputs(task.id)).toEqual([]);
      });

      it("deleteExpired with nothing due, or a limit of 0, deletes nothing", async () => {
        await taskIn("completed", { ttlMs: 100 });
        expect((await store.deleteExpired(T0 + 99, 10)).deleted).toBe(0);
        expect((await store.deleteExpired(T0 + 100, 0)).deleted).toBe(0);
        expect((await store.deleteExpired(T0 + 100, 10)).deleted).toBe(1);
      });
    });

    describe("retention (keepFinishedMs, remembered expired ids, fetched results)", () => {
      it("deleteExpired keeps a finished task keepFinishedMs after it ended, even past its expiresAt", async () => {
        const task = await store.create(newTask({ ttlMs: 100 }));
        await store.transition(task.id, allowedSources("completed"), "completed", { now: T0 + 500, outcome: RESULT });
        const rules = { keepFinishedMs: 1000 };
        expect((await store.deleteExpired(T0 + 1499, 10, rules)).deleted).toBe(0);
        expect(await store.get(task.id, { any: true })).not.toBeNull();
        expect((await store.deleteExpired(T0 + 1500, 10, rules)).deleted).toBe(1);
        expect(await store.get(task.id, { any: true })).toBeNull();
      });

      it("keepFinishedMs never shortens a ttl: a task that ended early stays until its expiresAt", async () => {
        const task = await taskIn("completed", { ttlMs: 60_000 });
        expect((await store.deleteExpired(T0 + 59_999, 10, { keepFinishedMs: 10 })).deleted).toBe(0);
        expect((await store.deleteExpired(T0 + 60_000, 10, { keepFinishedMs: 10 })).deleted).toBe(1);
        expect(await store.get(task.id, { any: true })).toBeNull();
      });

      it("a deleted task's id is remembered as expired for its owner only, for rememberExpiredMs", async () => {
        const task = await taskIn("completed", { owner: "alice", ttlMs: 100 });
        const anonymous = await taskIn("failed", { owner: null, ttlMs: 100 });
        expect((await store.deleteExpired(T0 + 100, 10, { rememberExpiredMs: 1000 })).deleted).toBe(2);
        expect(await store.wasExpired(task.id, { owner: "alice" })).toBe(true);
        expect(await store.wasExpired(task.id, { any: true })).toBe(true);
        expect(await store.wasExpired(task.id, { owner: "bob" })).toBe(false);
        expect(await store.wasExpired(task.id, { owner: null })).toBe(false);
        expect(await store.wasExpired(anonymous.id, { owner: null })).toBe(true);
        expect(await store.wasExpired(newTaskId(), { any: true })).toBe(false);

        await store.deleteExpired(T0 + 1099, 10, { rememberExpiredMs: 1000 });
        expect(await store.wasExpired(task.id, { owner: "alice" })).toBe(true);
        await store.deleteExpired(T0 + 1100, 10, { rememberExpiredMs: 1000 });
        expect(await store.wasExpired(task.id, { owner: "alice" })).toBe(false);
      });

      it("without rememberExpiredMs a deleted task's id is not remembered", async () => {
        const task = await taskIn("completed", { ttlMs: 100 });
        await store.deleteExpired(T0 + 100, 10);
        expect(await store.wasExpired(task.id, { any: true })).toBe(false);
      });

      it("deleteExpired counts the deleted completed and failed tasks whose result was never fetched", async () => {
        const fetched = await taskIn("completed", { ttlMs: 100 });
        await taskIn("completed", { ttlMs: 100 });
        await taskIn("failed", { ttlMs: 100 });
        await taskIn("cancelled", { ttlMs: 100 });
        expect(await store.markFetched(fetched.id, T0 + 50)).toBe(true);
        expect(await store.deleteExpired(T0 + 100, 10)).toEqual({ deleted: 4, unread: 2 });
      });

      it("markFetched is true only the first time, and only for a finished task", async () => {
        const running = await taskIn("working");
        const done = await taskIn("completed");
        expect(await store.markFetched(running.id, T0 + 2)).toBe(false);
        expect(await store.markFetched(done.id, T0 + 2)).toBe(true);
        expect(await store.markFetched(done.id, T0 + 3)).toBe(false);
        expect(await store.markFetched(newTaskId(), T0 + 3)).toBe(false);
      });
    });

    describe("active tasks and per-owner counts", () => {
      it("activeTasks returns non-terminal tasks of every owner in creation order, up to limit", async () => {
        const a = await taskIn("working", { owner: "alice", createdAt: T0 + 3 });
        const b = await taskIn("input_required", { owner: null, createdAt: T0 + 1 });
        const c = await taskIn("working", { owner: "bob", createdAt: T0 + 2 });
        for (const status of TERMINAL_STATUSES) await taskIn(status);
        expect((await store.activeTasks(10)).map((t) => t.id)).toEqual([b.id, c.id, a.id]);
        expect((await store.activeTasks(2)).map((t) => t.id)).toEqual([b.id, c.id]);
      });

      it("T-TTL-7: countActive counts one owner's non-terminal tasks; null counts only tasks without an owner", async () => {
        await taskIn("working", { owner: "alice" });
        await taskIn("input_required", { owner: "alice" });
        await taskIn("completed", { owner: "alice" });
        await taskIn("working", { owner: "bob" });
        await taskIn("working", { owner: null });
        expect(await store.countActive("alice")).toBe(2);
        expect(await store.countActive("bob")).toBe(1);
        expect(await store.countActive(null)).toBe(1);
        expect(await store.countActive("carol")).toBe(0);
      });

      it("T-TTL-7: countStored counts one owner's tasks in every status, expired ones until swept; null counts only tasks without an owner", async () => {
        for (const status of TASK_STATUSES) await taskIn(status, { owner: "alice", ttlMs: 100 });
        await taskIn("working", { owner: "bob" });
        await taskIn("completed", { owner: null });
        await taskIn("working", { owner: null });
        expect(await store.countStored("alice")).toBe(TASK_STATUSES.length);
        expect(await store.countStored("bob")).toBe(1);
        expect(await store.countStored(null)).toBe(2);
        expect(await store.countStored("carol")).toBe(0);
        // Counting ignores the clock (alice's tasks are all past their ttl at T0 + 100): a row
        // counts until the sweep deletes it, and only terminal ones are deleted.
        await store.deleteExpired(T0 + 100, 100);
        expect(await store.countStored("alice")).toBe(ACTIVE_STATUSES.length);
      });

      it("a task leaves the active set when it reaches a terminal status", async () => {
        const task = await taskIn("working");
        await store.transition(task.id, allowedSources("cancelled"), "cancelled", { now: T0 + 1 });
        expect(await store.countActive("alice")).toBe(0);
        expect(await store.activeTasks(10)).toEqual([]);
      });
    });

    describe("search (operator's view: newest first, filtered)", () => {
      /** Walks every page of a search and returns the ids in order. */
      async function walkSearch(filter: TaskFilter, pageSize: number): Promise<string[]> {
        const ids: string[] = [];
        let after: { createdAt: number; id: string } | null = null;
        for (;;) {
          const page = await store.search(filter, after, pageSize);
          ids.push(...page.map((t) => t.id));
          const last = page.at(-1);
          if (page.length < pageSize || last === undefined) return ids;
          after = { createdAt: last.createdAt, id: last.id };
        }
      }

      it("returns tasks of every owner newest first with scope { any: true }", async () => {
        const a = await taskIn("working", { owner: "alice", createdAt: T0 + 1 });
        const b = await taskIn("completed", { owner: null, createdAt: T0 + 3 });
        const c = await taskIn("failed", { owner: "bob", createdAt: T0 + 2 });
        expect((await store.search({ scope: { any: true } }, null, 10)).map((t) => t.id)).toEqual([b.id, c.id, a.id]);
      });

      it("walks 25 tasks with equal createdAt in descending id order, with no duplicates or gaps", async () => {
        const ids: string[] = [];
        for (let i = 0; i < 25; i++) ids.push((await taskIn("working", { createdAt: T0 })).id);
        expect(await walkSearch({ scope: { any: true } }, 10)).toEqual([...ids].sort().reverse());
      });

      it("T-SEC-3: an owner scope sees only that owner's tasks; a null owner only tasks without one", async () => {
        const mine = await taskIn("working", { owner: "alice" });
        const anonymous = await taskIn("working", { owner: null });
        await taskIn("working", { owner: "bob" });
        expect((await store.search({ scope: { owner: "alice" } }, null, 10)).map((t) => t.id)).toEqual([mine.id]);
        expect((await store.search({ scope: { owner: null } }, null, 10)).map((t) => t.id)).toEqual([anonymous.id]);
      });

      it("filters by any of several statuses, and an empty status list matches nothing", async () => {
        const working = await taskIn("working", { createdAt: T0 + 1 });
        const failed = await taskIn("failed", { createdAt: T0 + 2 });
        await taskIn("completed", { createdAt: T0 + 3 });
        const found = await store.search({ scope: { any: true }, statuses: ["failed", "working"] }, null, 10);
        expect(found.map((t) => t.id)).toEqual([failed.id, working.id]);
        expect(await store.search({ scope: { any: true }, statuses: [] }, null, 10)).toEqual([]);
      });

      it("filters by name together with the owner scope", async () => {
        const hit = await taskIn("working", { owner: "alice", name: "render" });
        await taskIn("working", { owner: "alice", name: "sleep" });
        await taskIn("working", { owner: "bob", name: "render" });
        const found = await store.search({ scope: { owner: "alice" }, name: "render" }, null, 10);
        expect(found.map((t) => t.id)).toEqual([hit.id]);
      });

      it("filters by id prefix, matched literally", async () => {
        const hit = await taskIn("working", { id: "abc%_1-task" });
        await taskIn("working", { id: "abd-task" });
        await taskIn("working", { id: "xabc%_1-task" });
        expect((await store.search({ scope: { any: true }, idPrefix: "abc%_" }, null, 10)).map((t) => t.id)).toEqual([hit.id]);
        expect(await store.search({ scope: { any: true }, idPrefix: "ab_" }, null, 10)).toEqual([]);
      });

      it("filters by owner name: the whole owner key, or its subject after the first '|'", async () => {
        const local = await taskIn("working", { owner: "local|alice", createdAt: T0 + 1 });
        const jwt = await taskIn("working", { owner: "https://issuer.example|alice", createdAt: T0 + 2 });
        const plain = await taskIn("working", { owner: "alice", createdAt: T0 + 3 });
        await taskIn("working", { owner: "local|alicia" });
        await taskIn("working", { owner: "local|bob|alice" });
        await taskIn("working", { owner: null });
        const found = await store.search({ scope: { any: true }, ownerName: "alice" }, null, 10);
        expect(found.map((t) => t.id)).toEqual([plain.id, jwt.id, local.id]);
        expect((await store.search({ scope: { any: true }, ownerName: "local|alice" }, null, 10)).map((t) => t.id)).toEqual([local.id]);
        // It narrows the scope, never widens it.
        expect(await store.search({ scope: { owner: "local|bob" }, ownerName: "alice" }, null, 10)).toEqual([]);
      });

      it("filters by creation time: from inclusive, to exclusive", async () => {
        await taskIn("working", { createdAt: T0 + 10 });
        const first = await taskIn("working", { createdAt: T0 + 20 });
        const second = await taskIn("working", { createdAt: T0 + 29 });
        await taskIn("working", { createdAt: T0 + 30 });
        const found = await store.search({ scope: { any: true }, createdFrom: T0 + 20, createdTo: T0 + 30 }, null, 10);
        expect(found.map((t) => t.id)).toEqual([second.id, first.id]);
        expect(await store.search({ scope: { any: true }, createdFrom: T0 + 31 }, null, 10)).toEqual([]);
        expect((await store.search({ scope: { any: true }, createdTo: T0 + 11 }, null, 10)).length).toBe(1);
      });

      it("a limit of 0 or less returns nothing", async () => {
        await taskIn("working");
        expect(await store.search({ scope: { any: true } }, null, 0)).toEqual([]);
        expect(await store.search({ scope: { any: true } }, null, -1)).toEqual([]);
      });
    });

    describe("countByStatus", () => {
      it("counts every status of the filter's tasks, with zeros for statuses nobody is in", async () => {
        await taskIn("working", { owner: "alice" });
        await taskIn("working", { owner: "alice" });
        await taskIn("failed", { owner: "alice", name: "other" });
        await taskIn("cancelled", { owner: "bob" });
        expect(await store.countByStatus({ scope: { any: true } })).toEqual({
          working: 2,
          input_required: 0,
          completed: 0,
          failed: 1,
          cancelled: 1,
        });
        expect(await store.countByStatus({ scope: { owner: "alice" }, name: "slow-tool" })).toEqual({
          working: 2,
          input_required: 0,
          completed: 0,
          failed: 0,
          cancelled: 0,
        });
      });

      it("counts only the tasks matching owner name, id prefix and time range", async () => {
        await taskIn("working", { owner: "local|alice", createdAt: T0 + 1 });
        await taskIn("failed", { owner: "local|alice", createdAt: T0 + 2 });
        await taskIn("failed", { owner: "local|alice", createdAt: T0 + 50 });
        await taskIn("failed", { owner: "local|bob", createdAt: T0 + 2 });
        const counts = await store.countByStatus({ scope: { any: true }, ownerName: "alice", createdTo: T0 + 10 });
        expect(counts).toEqual({ working: 1, input_required: 0, completed: 0, failed: 1, cancelled: 0 });
        const one = await taskIn("completed", { id: "zz-only-one", owner: "local|bob" });
        expect(await store.countByStatus({ scope: { any: true }, idPrefix: one.id })).toEqual({
          working: 0,
          input_required: 0,
          completed: 1,
          failed: 0,
          cancelled: 0,
        });
      });

      it("counts only the statuses asked for", async () => {
        await taskIn("working");
        await taskIn("input_required");
        await taskIn("completed");
        const counts = await store.countByStatus({ scope: { any: true }, statuses: ACTIVE_STATUSES });
        expect(counts).toEqual({ working: 1, input_required: 1, completed: 0, failed: 0, cancelled: 0 });
      });
    });

    describe("countByStatus: the kept counts", () => {
      /** The same counts recounted from the rows: a creation-time filter never uses the kept counts. */
      const recount = (filter: TaskFilter): Promise<Record<TaskStatus, number>> => store.countByStatus({ ...filter, createdFrom: 0 });
      const expectExact = async (filter: TaskFilter, expected: Record<TaskStatus, number>): Promise<void> => {
        expect(await store.countByStatus(filter)).toEqual(expected);
        expect(await recount(filter)).toEqual(expected);
      };
      const counts = (partial: Partial<Record<TaskStatus, number>>): Record<TaskStatus, number> => ({
        working: 0,
        input_required: 0,
        completed: 0,
        failed: 0,
        cancelled: 0,
        ...partial,
      });

      it("stay exact through creation, each transition and cancellation, per owner and tool", async () => {
        const a = await store.create(newTask({ owner: "alice" }));
        const b = await store.create(newTask({ owner: null, name: "other" }));
        await expectExact({ scope: { any: true } }, counts({ working: 2 }));
        await store.transition(a.id, allowedSources("input_required"), "input_required", { now: T0 + 1 });
        await expectExact({ scope: { any: true } }, counts({ working: 1, input_required: 1 }));
        await store.transition(a.id, allowedSources("working"), "working", { now: T0 + 2 });
        await store.transition(a.id, allowedSources("completed"), "completed", { now: T0 + 3, outcome: RESULT });
        await store.transition(b.id, allowedSources("cancelled"), "cancelled", { now: T0 + 4 });
        await expectExact({ scope: { any: true } }, counts({ completed: 1, cancelled: 1 }));
        await expectExact({ scope: { owner: null } }, counts({ cancelled: 1 }));
        await expectExact({ scope: { owner: "alice" }, name: "slow-tool" }, counts({ completed: 1 }));
        await expectExact({ scope: { owner: "alice" }, name: "other" }, counts({}));
      });

      it("do not move when a transition's compare-and-set fails", async () => {
        const task = await taskIn("cancelled");
        expect(await store.transition(task.id, allowedSources("completed"), "completed", { now: T0 + 5, outcome: RESULT })).toBeNull();
        await expectExact({ scope: { any: true } }, counts({ cancelled: 1 }));
      });

      it("drop the tasks the expiry sweep deletes", async () => {
        await taskIn("completed", { ttlMs: 10 });
        await taskIn("failed", { ttlMs: 10 });
        await taskIn("failed", { ttlMs: 100_000 });
        await taskIn("working", { ttlMs: 10 });
        await expectExact({ scope: { any: true } }, counts({ working: 1, completed: 1, failed: 2 }));
        expect((await store.deleteExpired(T0 + 1000, 10)).deleted).toBe(2);
        await expectExact({ scope: { any: true } }, counts({ working: 1, failed: 1 }));
        await expectExact({ scope: { owner: "alice" }, statuses: TERMINAL_STATUSES }, counts({ failed: 1 }));
      });

      it("stay exact under concurrent creations and racing transitions of the same tasks", async () => {
        const tasks = await Promise.all(Array.from({ length: 40 }, (_, i) => store.create(newTask({ owner: `owner-${i % 3}` }))));
        // Each task is raced to three terminal statuses at once: exactly one move wins per task.
        const moves = tasks.flatMap((task, i) =>
          (["completed", "failed", "cancelled"] as const).map((to) =>
            store.transition(task.id, allowedSources(to), to, { now: T0 + 10 + i, ...(to === "cancelled" ? {} : { outcome: RESULT }) }),
          ),
        );
        const more = Array.from({ length: 20 }, () => store.create(newTask({ owner: "owner-0" })));
        const [moved] = await Promise.all([Promise.all(moves), Promise.all(more)]);
        expect(moved.filter((task) => task !== null)).toHaveLength(40);
        const kept = await store.countByStatus({ scope: { any: true } });
        expect(kept).toEqual(await recount({ scope: { any: true } }));
        expect(kept.working).toBe(20);
        expect(kept.completed + kept.failed + kept.cancelled).toBe(40);
        for (const owner of ["owner-0", "owner-1", "owner-2"]) {
          expect(await store.countByStatus({ scope: { owner } })).toEqual(await recount({ scope: { owner } }));
        }
      });
    });

    describe("history (the status timeline)", () => {
      it("starts with working at createdAt", async () => {
        const task = await taskIn("working");
        expect(await store.history(task.id)).toEqual([{ status: "working", statusMessage: null, at: T0 }]);
      });

      it("appends every successful transition with its time and statusMessage, in order", async () => {
        const task = await taskIn("working");
        await store.transition(task.id, allowedSources("input_required"), "input_required", { now: T0 + 1, statusMessage: "Need input" });
        await store.transition(task.id, allowedSources("working"), "working", { now: T0 + 1 });
        await store.transition(task.id, allowedSources("completed"), "completed", { now: T0 + 5, statusMessage: null, outcome: RESULT });
        expect(await store.history(task.id)).toEqual([
          { status: "working", statusMessage: null, at: T0 },
          { status: "input_required", statusMessage: "Need input", at: T0 + 1 },
          { status: "working", statusMessage: "Need input", at: T0 + 1 },
          { status: "completed", statusMessage: null, at: T0 + 5 },
        ]);
      });

      it("a refused transition and an annotation add nothing", async () => {
        const task = await taskIn("cancelled");
        const before = await store.history(task.id);
        expect(await store.transition(task.id, allowedSources("completed"), "completed", { now: T0 + 9, outcome: RESULT })).toBeNull();
        await store.annotate(task.id, { statusMessage: "late", now: T0 + 9 });
        expect(await store.history(task.id)).toEqual(before);
        expect(before.map((c) => c.status)).toEqual(["working", "cancelled"]);
      });

      it("is empty for an unknown task, and deleted with an expired task", async () => {
        expect(await store.history(newTaskId())).toEqual([]);
        const task = await taskIn("completed", { ttlMs: 100 });
        expect((await store.deleteExpired(T0 + 100, 10)).deleted).toBe(1);
        expect(await store.history(task.id)).toEqual([]);
      });
    });

    describe("inputs (the whole exchange)", () => {
      it("lists answered and pending requests oldest first, with their answers", async () => {
        const task = await taskIn("input_required");
        await store.enqueueInput({ taskId: task.id, id: "q2", method: "sampling/createMessage", params: { n: 2 }, createdAt: T0 + 2 });
        await store.enqueueInput({ taskId: task.id, id: "q1", method: "elicitation/create", params: { n: 1 }, createdAt: T0 + 1 });
        const answer: TaskOutcome = { kind: "result", value: { action: "accept", content: { answer: "yes" } } };
        await store.answerInput(task.id, "q1", answer);
        expect(await store.inputs(task.id)).toEqual([
          { taskId: task.id, id: "q1", method: "elicitation/create", params: { n: 1 }, createdAt: T0 + 1, answer },
          { taskId: task.id, id: "q2", method: "sampling/createMessage", params: { n: 2 }, createdAt: T0 + 2, answer: null },
        ]);
      });

      it("is empty for a task that never asked anything", async () => {
        const task = await taskIn("working");
        expect(await store.inputs(task.id)).toEqual([]);
      });
    });

    describe("secret", () => {
      it("is 32 bytes and the same on every call", async () => {
        const first = await store.secret();
        expect(first).toBeInstanceOf(Buffer);
        expect(first.length).toBe(32);
        expect((await store.secret()).equals(first)).toBe(true);
      });

      it("concurrent first calls agree", async () => {
        const [a, b] = await Promise.all([store.secret(), store.secret()]);
        expect(a.equals(b)).toBe(true);
      });

      it("cannot be changed through the returned buffer", async () => {
        const first = await store.secret();
        const copy = Buffer.from(first);
        first.fill(0);
        expect((await store.secret()).equals(copy)).toBe(true);
      });
    });

    describe("fencing: a write naming a claim the task is not held by changes nothing (every store)", () => {
      // No task here was ever claimed (memory and SQLite hand out no claims at all): any claim is
      // superseded. The lease contract covers claims a store did hand out.
      const stray = { workerId: "w-gone", generation: 1, attempt: 1 };
      const OUTCOME: TaskOutcome = { kind: "result", value: { content: [{ type: "text", text: "late" }] } };

      it("the outcome, a status move, progress and a status message are not written", async () => {
        const task = await taskIn("working");
        expect(
          await store.transition(task.id, allowedSources("completed"), "completed", { now: T0 + 5, outcome: OUTCOME, claim: stray }),
        ).toBeNull();
        expect(await store.transition(task.id, ["working"], "input_required", { now: T0 + 5, claim: stray })).toBeNull();
        expect(await store.annotate(task.id, { progress: { progress: 1 }, statusMessage: "late", now: T0 + 5, claim: stray })).toBe(false);
        expect(await store.get(task.id, { any: true })).toEqual(task);
        expect((await store.history(task.id)).map((c) => c.status)).toEqual(["working"]);
      });

      it("a question is not queued (claim_lost), and no question is answered", async () => {
        const task = await taskIn("working");
        const ask = { taskId: task.id, method: "elicitation/create", params: { message: "?" } };
        await expect(store.enqueueInput({ ...ask, id: "late", createdAt: T0 + 5 }, stray)).rejects.toMatchObject({ reason: "claim_lost" });
        expect(await store.inputs(task.id)).toEqual([]);
        await store.enqueueInput({ ...ask, id: "open", createdAt: T0 + 6 });
        expect(await store.answerInput(task.id, "open", OUTCOME, stray)).toBe(false);
        expect((await store.pendingInputs(task.id)).map((i) => i.id)).toEqual(["open"]);
      });

      it("a checkpoint is not kept", async () => {
        const task = await taskIn("working");
        if (!isCheckpointStore(store)) return expect(isCheckpointStore(store)).toBe(false);
        expect(await store.saveCheckpoint(task.id, "step#1", { v: 1 }, T0 + 5, stray)).toBe(false);
        expect(await store.checkpoints(task.id)).toEqual([]);
      });
    });

    describe("checkpoints (durable execution)", () => {
      /** Every built-in store keeps checkpoints; a store without them cannot resume handlers. */
      function checkpointing(): TaskStore & CheckpointStore {
        if (!isCheckpointStore(store)) throw new Error("this store does not implement CheckpointStore");
        return store;
      }

      it("keeps a step's JSON result and gives it back", async () => {
        const cp = checkpointing();
        const task = await taskIn("working");
        const value = { n: 3, list: [1, "two", null], nested: { ü: true } };
        expect(await cp.saveCheckpoint(task.id, "fetch", value, T0 + 5)).toBe(true);
        expect(await cp.checkpoints(task.id)).toEqual([{ name: "fetch", value, createdAt: T0 + 5 }]);
      });

      it("keeps the first write of a name: a second one is ignored and says so", async () => {
        const cp = checkpointing();
        const task = await taskIn("working");
        expect(await cp.saveCheckpoint(task.id, "charge", { id: "first" }, T0 + 1)).toBe(true);
        expect(await cp.saveCheckpoint(task.id, "charge", { id: "second" }, T0 + 2)).toBe(false);
        expect(await cp.checkpoints(task.id)).toEqual([{ name: "charge", value: { id: "first" }, createdAt: T0 + 1 }]);
      });

      it("lists a task's checkpoints oldest first, each task its own", async () => {
        const cp = checkpointing();
        const a = await taskIn("working");
        const b = await taskIn("input_required");
        await cp.saveCheckpoint(a.id, "one", 1, T0 + 1);
        await cp.saveCheckpoint(b.id, "one", "b", T0 + 1);
        await cp.saveCheckpoint(a.id, "two", 2, T0 + 1);
        await cp.saveCheckpoint(a.id, "three", 3, T0 + 2);
        expect((await cp.checkpoints(a.id)).map((c) => [c.name, c.value])).toEqual([
          ["one", 1],
          ["two", 2],
          ["three", 3],
        ]);
        expect((await cp.checkpoints(b.id)).map((c) => c.value)).toEqual(["b"]);
      });

      it("keeps undefined and null results as null", async () => {
        const cp = checkpointing();
        const task = await taskIn("working");
        await cp.saveCheckpoint(task.id, "nothing", undefined, T0);
        await cp.saveCheckpoint(task.id, "null", null, T0);
        expect((await cp.checkpoints(task.id)).map((c) => c.value)).toEqual([null, null]);
      });

      it("keeps nothing for an unknown task", async () => {
        const cp = checkpointing();
        const id = newTaskId();
        expect(await cp.saveCheckpoint(id, "step", 1, T0)).toBe(false);
        expect(await cp.checkpoints(id)).toEqual([]);
      });

      it("dropCheckpoints removes every checkpoint of that task only", async () => {
        const cp = checkpointing();
        const a = await taskIn("working");
        const b = await taskIn("working");
        await cp.saveCheckpoint(a.id, "one", 1, T0);
        await cp.saveCheckpoint(a.id, "two", 2, T0);
        await cp.saveCheckpoint(b.id, "one", 1, T0);
        expect(await cp.dropCheckpoints(a.id)).toBe(2);
        expect(await cp.checkpoints(a.id)).toEqual([]);
        expect(await cp.checkpoints(b.id)).toHaveLength(1);
        // Dropped names may be written again (a re-run from scratch).
        expect(await cp.saveCheckpoint(a.id, "one", "again", T0 + 1)).toBe(true);
      });

      it("go with their task when the expiry sweep deletes it", async () => {
        const cp = checkpointing();
        const task = await taskIn("completed", { ttlMs: 10 });
        await cp.saveCheckpoint(task.id, "step", 1, T0);
        expect((await store.deleteExpired(T0 + 1_000_000, 10)).deleted).toBe(1);
        expect(await cp.checkpoints(task.id)).toEqual([]);
      });
    });

    describe("idempotency keys (one task per owner and key)", () => {
      const KEY = { key: "r:order-17", fingerprint: "fp-1" };

      it("the first creation under a key stores its task", async () => {
        const task = newTask();
        const first = await store.createKeyed(task, KEY);
        expect(first.created).toBe(true);
        expect(first.task).toMatchObject({ id: task.id, status: "working", owner: "alice" });
        expect((await store.get(task.id, { any: true }))?.id).toBe(task.id);
      });

      it("a later creation under the same owner and key stores nothing and gets the first task, as it is now, with the first fingerprint", async () => {
        const first = await store.createKeyed(newTask(), KEY);
        await store.transition(first.task.id, allowedSources("completed"), "completed", { now: T0 + 5, outcome: RESULT });
        const again = newTask({ name: "other" });
        const second = await store.createKeyed(again, { key: KEY.key, fingerprint: "fp-2" });
        expect(second.created).toBe(false);
        expect(second.task.id).toBe(first.task.id);
        expect(second.task.status).toBe("completed");
        expect(second.task.outcome).toEqual(RESULT);
        expect(second.created ? null : second.fingerprint).toBe("fp-1");
        expect(await store.get(again.id, { any: true })).toBeNull();
        expect(await store.countStored("alice")).toBe(1);
      });

      it("keys are scoped to the owner: another owner's, and the unowned tasks', same key is another task", async () => {
        const alice = await store.createKeyed(newTask({ owner: "alice" }), KEY);
        const bob = await store.createKeyed(newTask({ owner: "bob" }), KEY);
        const nobody = await store.createKeyed(newTask({ owner: null }), KEY);
        const empty = await store.createKeyed(newTask({ owner: "" }), KEY);
        expect([alice.created, bob.created, nobody.created, empty.created]).toEqual([true, true, true, true]);
        expect(new Set([alice.task.id, bob.task.id, nobody.task.id, empty.task.id]).size).toBe(4);
        const again = await store.createKeyed(newTask({ owner: null }), KEY);
        expect(again.created ? null : again.task.id).toBe(nobody.task.id);
      });

      it("of 20 concurrent creations under one key exactly one stores a task, and all get it", async () => {
        const outcomes = await Promise.all(Array.from({ length: 20 }, () => store.createKeyed(newTask(), KEY)));
        expect(outcomes.filter((o) => o.created)).toHaveLength(1);
        expect(new Set(outcomes.map((o) => o.task.id)).size).toBe(1);
        expect(await store.countStored("alice")).toBe(1);
      });

      it("findKey answers the task an owner's key names and its fingerprint, and nothing for another owner", async () => {
        expect(await store.findKey("alice", KEY.key)).toBeNull();
        const first = await store.createKeyed(newTask(), KEY);
        const found = await store.findKey("alice", KEY.key);
        expect(found?.task.id).toBe(first.task.id);
        expect(found?.fingerprint).toBe(KEY.fingerprint);
        expect(await store.findKey("bob", KEY.key)).toBeNull();
      });

      it("a plain creation takes no key", async () => {
        await store.create(newTask());
        expect((await store.createKeyed(newTask(), KEY)).created).toBe(true);
      });

      it("releaseKey forgets a key only while it names the given task", async () => {
        const first = await store.createKeyed(newTask(), KEY);
        expect(await store.releaseKey("alice", KEY.key, newTaskId())).toBe(false);
        expect(await store.releaseKey("bob", KEY.key, first.task.id)).toBe(false);
        expect((await store.createKeyed(newTask(), KEY)).created).toBe(false);
        expect(await store.releaseKey("alice", KEY.key, first.task.id)).toBe(true);
        expect(await store.releaseKey("alice", KEY.key, first.task.id)).toBe(false);
        const next = await store.createKeyed(newTask(), KEY);
        expect(next.created).toBe(true);
        expect(next.task.id).not.toBe(first.task.id);
        expect((await store.get(first.task.id, { any: true }))?.id).toBe(first.task.id);
      });

      it("a key is kept as long as its task: the expiry sweep deletes it with the task", async () => {
        const first = await store.createKeyed(newTask({ ttlMs: 100 }), KEY);
        await store.transition(first.task.id, allowedSources("completed"), "completed", { now: T0 + 1, outcome: RESULT });
        expect((await store.createKeyed(newTask(), KEY)).created).toBe(false);
        expect((await store.deleteExpired(T0 + 100, 10)).deleted).toBe(1);
        const next = await store.createKeyed(newTask(), KEY);
        expect(next.created).toBe(true);
        expect(next.task.id).not.toBe(first.task.id);
      });
    });

    queueContract(() => store, newTask);
    toolPauseContract(() => store, newTask);
    waitContract(() => store, newTask);

    describe("close", () => {
      it("operations after close are rejected", async () => {
        await store.close();
        await expect(store.get(newTaskId(), { any: true })).rejects.toThrow();
        await expect(store.create(newTask())).rejects.toThrow();
        await expect(store.secret()).rejects.toThrow();
      });
    });
  });
}
