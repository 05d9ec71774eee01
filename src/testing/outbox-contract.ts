/**
 * The behavioural contract of {@link OutboxStore}, the webhook outbox every store of this package
 * keeps: the rows a transition writes in its own atomic write, and how senders claim, settle,
 * list and re-queue them. Any implementation runs this suite unchanged. Time is the `now` each
 * operation takes: a lease "expires" by passing a later `now`.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { allowedSources, type TaskStatus } from "../core/task-status.js";
import type { NewTask, TaskRecord, WebhookRoute } from "../core/task.js";
import { isLeaseStore } from "../store/lease-store.js";
import type { OutboxStore } from "../store/outbox-store.js";
import type { TaskStore } from "../store/task-store.js";
import { newTask } from "./store-contract.js";

const T0 = 1_700_000_000_000;
const LEASE = 30_000;
const A = "https://a.example.com/hook";
const B = "https://b.example.com/hook";
const ALL = ["task.input_required", "task.completed", "task.failed", "task.cancelled"];

/** Registers the outbox contract in vitest under `name`: `make` returns a fresh, empty store for each test. */
export function outboxContract(name: string, make: () => Promise<TaskStore & OutboxStore> | (TaskStore & OutboxStore)): void {
  describe(`${name}: OutboxStore contract`, () => {
    let store: TaskStore & OutboxStore;
    beforeEach(async () => {
      store = await make();
    });
    afterEach(async () => {
      await store.close();
    });

    const routed = (routes: WebhookRoute[], overrides: Partial<NewTask> = {}): Promise<TaskRecord> => {
      const task = newTask(overrides);
      return store.create({
        ...task,
        origin: { ...task.origin, webhooks: routes, trace: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" } },
      });
    };
    const move = async (id: string, to: TaskStatus, now: number, statusMessage?: string): Promise<TaskRecord | null> =>
      store.transition(id, allowedSources(to), to, {
        now,
        ...(statusMessage !== undefined && { statusMessage }),
        ...(to === "completed" && { outcome: { kind: "result" as const, value: { content: [] } } }),
        ...(to === "failed" && { outcome: { kind: "error" as const, error: { code: -32603, message: "x" } } }),
      });

    it("writes one row per route that wants the event, with the transition as it was, in the transition's write", async () => {
      const task = await routed([
        { url: A, endpoint: "a", events: ALL },
        { url: B, endpoint: "b", events: ["task.completed"] },
      ]);
      await move(task.id, "input_required", T0 + 10, "Need a name");
      const rows = await store.deliveries({ taskId: task.id }, 10);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        taskId: task.id,
        url: A,
        endpoint: "a",
        type: "task.input_required",
        status: "input_required",
        statusMessage: "Need a name",
        at: T0 + 10,
        owner: "alice",
        name: "slow-tool",
        createdAt: T0,
        ttlMs: 60_000,
        pollIntervalMs: 1000,
        state: "pending",
        attempts: 0,
        nextAttemptAt: T0 + 10,
        trace: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" },
      });
      expect(rows[0]?.id).toMatch(/^msg_[0-9a-f]{32}$/);
      await move(task.id, "working", T0 + 20);
      await move(task.id, "completed", T0 + 30);
      const after = await store.deliveries({ taskId: task.id }, 10);
      expect(after.map((row) => [row.type, row.url])).toEqual([
        ["task.completed", B],
        ["task.completed", A],
        ["task.input_required", A],
      ]);
      expect(new Set(after.map((row) => row.id)).size).toBe(3);
    });

    it("writes nothing for a task without routes, for `working`, or for a refused move", async () => {
      const plain = await store.create(newTask());
      await move(plain.id, "completed", T0 + 1);
      const task = await routed([{ url: A, endpoint: "a", events: ALL }]);
      await move(task.id, "cancelled", T0 + 1);
      expect(await move(task.id, "completed", T0 + 2)).toBeNull();
      expect((await store.deliveries({}, 10)).map((row) => row.type)).toEqual(["task.cancelled"]);
    });

    it("hands out only the oldest pending row of a (task, URL) pair, so one task's events arrive in order", async () => {
      const task = await routed([{ url: A, endpoint: "a", events: ALL }]);
      await move(task.id, "input_required", T0 + 1);
      await move(task.id, "working", T0 + 2);
      await move(task.id, "completed", T0 + 3);
      const first = await store.claimDeliveries("s1", T0 + 10, LEASE, 10);
      expect(first.map((row) => row.type)).toEqual(["task.input_required"]);
      expect(await store.claimDeliveries("s2", T0 + 11, LEASE, 10)).toEqual([]);
      expect(
        await store.settleDelivery(first[0]!.id, first[0]!.lease, {
          state: "delivered",
          nextAttemptAt: T0 + 12,
          lastStatus: 200,
          lastError: null,
          now: T0 + 12,
        }),
      ).toBe(true);
      const second = await store.claimDeliveries("s2", T0 + 13, LEASE, 10);
      expect(second.map((row) => row.type)).toEqual(["task.completed"]);
    });

    it("gives other tasks' and other URLs' rows out side by side, oldest first", async () => {
      const one = await routed([
        { url: A, endpoint: "a", events: ALL },
        { url: B, endpoint: "b", events: ALL },
      ]);
      const two = await routed([{ url: A, endpoint: "a", events: ALL }]);
      await move(one.id, "completed", T0 + 1);
      await move(two.id, "failed", T0 + 2);
      const claimed = await store.claimDeliveries("s1", T0 + 10, LEASE, 10);
      expect(claimed.map((row) => [row.taskId, row.url])).toEqual([
        [one.id, A],
        [one.id, B],
        [two.id, A],
      ]);
      expect((await store.claimDeliveries("s1", T0 + 10, LEASE, 1, [A])).length).toBe(0);
    });

    it("fences a settle by its lease: once the lease ran out and another sender claimed the row, the first changes nothing", async () => {
      const task = await routed([{ url: A, endpoint: "a", events: ALL }]);
      await move(task.id, "completed", T0 + 1);
      const [first] = await store.claimDeliveries("s1", T0 + 10, LEASE, 10);
      expect(await store.claimDeliveries("s2", T0 + 10 + LEASE - 1, LEASE, 10)).toEqual([]);
      const [again] = await store.claimDeliveries("s2", T0 + 10 + LEASE, LEASE, 10);
      expect(again?.id).toBe(first?.id);
      const done = { state: "delivered" as const, nextAttemptAt: T0, lastStatus: 204, lastError: null, now: T0 + LEASE + 20 };
      expect(await store.settleDelivery(first!.id, first!.lease, done)).toBe(false);
      expect(await store.settleDelivery(again!.id, again!.lease, done)).toBe(true);
      expect((await store.deliveries({ taskId: task.id }, 1))[0]).toMatchObject({ state: "delivered", attempts: 1, lastStatus: 204 });
    });

    it("fences each of several settles made at once by its own lease", async () => {
      const tasks = [];
      for (let i = 0; i < 4; i++) tasks.push(await routed([{ url: A, endpoint: "a", events: ALL }]));
      for (const [i, task] of tasks.entries()) await move(task.id, "completed", T0 + 1 + i);
      const [stale] = await store.claimDeliveries("s1", T0 + 10, LEASE, 1);
      const [taken] = await store.claimDeliveries("s2", T0 + 10 + LEASE, LEASE, 1);
      expect(taken?.id).toBe(stale?.id);
      const rest = await store.claimDeliveries("s3", T0 + 10 + LEASE, LEASE, 3);
      expect(rest).toHaveLength(3);
      const done = { state: "delivered" as const, nextAttemptAt: T0, lastStatus: 204, lastError: null, now: T0 + LEASE + 20 };
      const settled = await Promise.all([
        store.settleDelivery(rest[0]!.id, rest[0]!.lease, done),
        store.settleDelivery(stale!.id, stale!.lease, done),
        store.settleDelivery(rest[1]!.id, rest[1]!.lease, done),
        store.settleDelivery(rest[2]!.id, rest[2]!.lease, { ...done, state: "pending", nextAttemptAt: T0 + LEASE + 1000, lastStatus: 500 }),
      ]);
      expect(settled).toEqual([true, false, true, true]);
      const byId = new Map((await store.deliveries({}, 10)).map((row) => [row.id, row]));
      expect(byId.get(stale!.id)).toMatchObject({ state: "pending", attempts: 0 });
      expect(byId.get(rest[0]!.id)).toMatchObject({ state: "delivered", attempts: 1, lastStatus: 204 });
      expect(byId.get(rest[1]!.id)).toMatchObject({ state: "delivered", attempts: 1 });
      expect(byId.get(rest[2]!.id)).toMatchObject({ state: "pending", attempts: 1, lastStatus: 500, nextAttemptAt: T0 + LEASE + 1000 });
      expect((await store.claimDeliveries("s3", T0 + LEASE + 999, LEASE, 10)).map((row) => row.id)).toEqual([]);
    });

    it("leases the rows it writes after leaseWrites to that sender: no other sender claims them before the lease runs out", async () => {
      store.leaseWrites({ owner: "writer", leaseMs: LEASE });
      const task = await routed([{ url: A, endpoint: "a", events: ALL }]);
      await move(task.id, "completed", T0 + 1);
      expect(await store.claimDeliveries("other", T0 + 1 + LEASE - 1, LEASE, 10)).toEqual([]);
      const own = await store.ownDeliveries("writer", T0 + 2, T0 + 2, 10, []);
      expect(own.map((row) => [row.taskId, row.type, row.attempts])).toEqual([[task.id, "task.completed", 0]]);
      expect(own[0]?.lease.owner).toBe("writer");
      expect(await store.ownDeliveries("other", T0 + 2, T0 + 2, 10, [])).toEqual([]);
      // Killed before sending it: once its lease has run out, another sender claims it, and the
      // writer's late settle changes nothing.
      const [claimed] = await store.claimDeliveries("other", T0 + 1 + LEASE, LEASE, 10);
      expect(claimed?.id).toBe(own[0]?.id);
      expect(claimed?.lease.generation).not.toBe(own[0]?.lease.generation);
      expect(await store.ownDeliveries("writer", T0 + 1 + LEASE, T0 + 1 + LEASE, 10, [])).toEqual([]);
      const done = { state: "delivered" as const, nextAttemptAt: T0, lastStatus: 204, lastError: null, now: T0 + LEASE + 5 };
      expect(await store.settleDelivery(own[0]!.id, own[0]!.lease, done)).toBe(false);
      expect(await store.settleDelivery(claimed!.id, claimed!.lease, done)).toBe(true);
    });

    it("settles a row read by its writer's sender with the lease it was written with", async () => {
      store.leaseWrites({ owner: "writer", leaseMs: LEASE });
      const task = await routed([{ url: A, endpoint: "a", events: ALL }]);
      await move(task.id, "completed", T0 + 1);
      const [own] = await store.ownDeliveries("writer", T0 + 2, T0 + 2, 10, []);
      const done = { state: "delivered" as const, nextAttemptAt: T0 + 3, lastStatus: 200, lastError: null, now: T0 + 3 };
      expect(await store.settleDelivery(own!.id, own!.lease, done)).toBe(true);
      expect((await store.deliveries({ taskId: task.id }, 1))[0]).toMatchObject({ state: "delivered", attempts: 1, lastStatus: 200 });
      expect(await store.ownDeliveries("writer", T0 + 4, T0 + 4, 10, [])).toEqual([]);
      expect(await store.claimDeliveries("other", T0 + 1 + LEASE, LEASE, 10)).toEqual([]);
    });

    it("reads a writer's own rows as a claim hands rows out: in order per task, none held, excluded, disabled or with too little lease left", async () => {
      store.leaseWrites({ owner: "writer", leaseMs: LEASE });
      const one = await routed([{ url: A, endpoint: "a", events: ALL }]);
      const two = await routed([{ url: B, endpoint: "b", events: ALL }]);
      const three = await routed([{ url: A, endpoint: "a", events: ALL }]);
      await move(one.id, "input_required", T0 + 1);
      await move(one.id, "working", T0 + 2);
      await move(one.id, "completed", T0 + 3);
      await move(two.id, "completed", T0 + 4);
      await move(three.id, "completed", T0 + 5);
      const all = await store.ownDeliveries("writer", T0 + 10, T0 + 10, 10, []);
      expect(all.map((row) => [row.taskId, row.type])).toEqual([
        [one.id, "task.input_required"],
        [two.id, "task.completed"],
        [three.id, "task.completed"],
      ]);
      expect((await store.ownDeliveries("writer", T0 + 10, T0 + 10, 1, [])).map((row) => row.taskId)).toEqual([one.id]);
      expect((await store.ownDeliveries("writer", T0 + 10, T0 + 10, 10, [all[0]!.id])).map((row) => row.taskId)).toEqual([
        two.id,
        three.id,
      ]);
      expect((await store.ownDeliveries("writer", T0 + 10, T0 + 10, 10, [], [A])).map((row) => row.taskId)).toEqual([two.id]);
      // Leased until T0 + 4 + LEASE: not with less than an attempt's time left.
      expect((await store.ownDeliveries("writer", T0 + 10, T0 + 4 + LEASE, 10, [])).map((row) => row.taskId)).toEqual([three.id]);
      await store.disableUrl(B, "answered 410 Gone", T0 + 11);
      expect((await store.ownDeliveries("writer", T0 + 12, T0 + 12, 10, [])).map((row) => row.taskId)).toEqual([one.id, three.id]);
      const done = { state: "delivered" as const, nextAttemptAt: T0 + 13, lastStatus: 200, lastError: null, now: T0 + 13 };
      expect(await store.settleDelivery(all[0]!.id, all[0]!.lease, done)).toBe(true);
      const next = await store.ownDeliveries("writer", T0 + 14, T0 + 14, 10, [], [B]);
      expect(next.map((row) => [row.taskId, row.type])).toEqual([
        [one.id, "task.completed"],
        [three.id, "task.completed"],
      ]);
    });

    it("writes rows unleased again after leaseWrites(null): any sender claims them at once", async () => {
      store.leaseWrites({ owner: "writer", leaseMs: LEASE });
      store.leaseWrites(null);
      const task = await routed([{ url: A, endpoint: "a", events: ALL }]);
      await move(task.id, "completed", T0 + 1);
      expect(await store.ownDeliveries("writer", T0 + 2, T0 + 2, 10, [])).toEqual([]);
      expect((await store.claimDeliveries("other", T0 + 2, LEASE, 10)).map((row) => row.taskId)).toEqual([task.id]);
    });

    it("keeps a retried row until it is due, and a dead one out of the queue", async () => {
      const task = await routed([{ url: A, endpoint: "a", events: ALL }]);
      await move(task.id, "completed", T0 + 1);
      const [row] = await store.claimDeliveries("s1", T0 + 10, LEASE, 10);
      await store.settleDelivery(row!.id, row!.lease, {
        state: "pending",
        nextAttemptAt: T0 + 5000,
        lastStatus: 500,
        lastError: "HTTP 500",
        now: T0 + 20,
      });
      expect(await store.claimDeliveries("s1", T0 + 4999, LEASE, 10)).toEqual([]);
      const [retry] = await store.claimDeliveries("s1", T0 + 5000, LEASE, 10);
      expect(retry).toMatchObject({ id: row!.id, attempts: 1, lastError: "HTTP 500" });
      await store.settleDelivery(retry!.id, retry!.lease, {
        state: "dead",
        nextAttemptAt: T0,
        lastStatus: 500,
        lastError: "HTTP 500",
        now: T0 + 5001,
      });
      expect(await store.claimDeliveries("s1", T0 + 99_999_999, LEASE, 10)).toEqual([]);
      expect(await store.outboxStats()).toEqual({ pending: 0, dead: 1, oldestPendingAt: null });
    });

    it("stops a disabled URL until a redeliver re-enables it and re-queues its dead rows", async () => {
      const task = await routed([{ url: A, endpoint: "a", events: ALL }]);
      await move(task.id, "completed", T0 + 1);
      const [row] = await store.claimDeliveries("s1", T0 + 10, LEASE, 10);
      await store.disableUrl(A, "answered 410 Gone", T0 + 11);
      await store.settleDelivery(row!.id, row!.lease, {
        state: "dead",
        nextAttemptAt: T0,
        lastStatus: 410,
        lastError: "410",
        now: T0 + 11,
      });
      const other = await routed([{ url: A, endpoint: "a", events: ALL }]);
      await move(other.id, "cancelled", T0 + 12);
      expect(await store.claimDeliveries("s1", T0 + 20, LEASE, 10)).toEqual([]);
      expect(await store.disabledUrls()).toEqual([{ url: A, reason: "answered 410 Gone", at: T0 + 11 }]);
      expect(await store.outboxStats()).toEqual({ pending: 1, dead: 1, oldestPendingAt: T0 + 12 });
      expect(await store.redeliver({ url: A }, T0 + 30)).toBe(1);
      expect(await store.disabledUrls()).toEqual([]);
      const claimed = await store.claimDeliveries("s1", T0 + 30, LEASE, 10);
      expect(claimed.map((d) => [d.taskId, d.attempts])).toEqual([
        [task.id, 0],
        [other.id, 0],
      ]);
    });

    it("re-queues one delivered row by its id", async () => {
      const task = await routed([{ url: A, endpoint: "a", events: ALL }]);
      await move(task.id, "completed", T0 + 1);
      const [row] = await store.claimDeliveries("s1", T0 + 10, LEASE, 10);
      await store.settleDelivery(row!.id, row!.lease, {
        state: "delivered",
        nextAttemptAt: T0,
        lastStatus: 200,
        lastError: null,
        now: T0 + 11,
      });
      expect(await store.redeliver({ id: row!.id }, T0 + 20)).toBe(1);
      expect((await store.claimDeliveries("s1", T0 + 20, LEASE, 10)).map((d) => d.id)).toEqual([row!.id]);
    });

    it("lists one delivery by its id, with the other filters still applied", async () => {
      const task = await routed([
        { url: A, endpoint: "a", events: ALL },
        { url: B, endpoint: "b", events: ALL },
      ]);
      await move(task.id, "input_required", T0 + 1);
      await move(task.id, "completed", T0 + 2);
      const all = await store.deliveries({}, 10);
      expect(all).toHaveLength(4);
      const target = all.find((row) => row.url === B && row.type === "task.input_required")!;
      expect((await store.deliveries({ id: target.id }, 10)).map((row) => row.id)).toEqual([target.id]);
      expect(await store.deliveries({ id: target.id, url: B, taskId: task.id, state: "pending" }, 10)).toHaveLength(1);
      expect(await store.deliveries({ id: target.id, url: A }, 10)).toEqual([]);
      expect(await store.deliveries({ id: target.id, state: "dead" }, 10)).toEqual([]);
      expect(await store.deliveries({ id: "msg_unknown" }, 10)).toEqual([]);
      expect(await store.deliveries({ id: target.id }, 0)).toEqual([]);
    });

    it("prunes settled rows older than a time, never pending ones", async () => {
      const task = await routed([
        { url: A, endpoint: "a", events: ALL },
        { url: B, endpoint: "b", events: ALL },
      ]);
      await move(task.id, "completed", T0 + 1);
      const [row] = await store.claimDeliveries("s1", T0 + 10, LEASE, 1);
      await store.settleDelivery(row!.id, row!.lease, {
        state: "delivered",
        nextAttemptAt: T0,
        lastStatus: 200,
        lastError: null,
        now: T0 + 11,
      });
      expect(await store.pruneDeliveries(T0 + 2, 100)).toBe(1);
      expect((await store.deliveries({}, 10)).map((d) => d.state)).toEqual(["pending"]);
    });

    it("writes the event of a task its lease reaper fails (cluster stores)", async () => {
      if (!isLeaseStore(store)) return;
      const task = await routed([{ url: A, endpoint: "a", events: ["task.failed"] }]);
      const [claimed] = await store.claim("w1", 1, 1000, T0 + 1);
      expect(claimed?.id).toBe(task.id);
      const failed = await store.failExpired(task.id, "w1", T0 + 5000, "The task's worker stopped responding", {
        kind: "error",
        error: { code: -32603, message: "lost" },
      });
      expect(failed?.status).toBe("failed");
      expect((await store.deliveries({ taskId: task.id }, 10)).map((d) => [d.type, d.statusMessage])).toEqual([
        ["task.failed", "The task's worker stopped responding"],
      ]);
    });
  });
}
