import { afterEach, describe, expect, it } from "vitest";
import type { TaskEvent } from "../../src/events/task-event.js";
import { MAX_NOTIFY_BYTES, pgEventBus, type PgEventBus } from "../../src/events/pg-event-bus.js";
import { silentLogger } from "../../src/core/logger.js";
import { postgresStore } from "../../src/store/postgres/postgres-store.js";
import { tablesOf } from "../../src/store/postgres/sql.js";
import { pgQuery, TEST_PG_URL, uniqueName } from "../support/postgres.js";

const buses: PgEventBus[] = [];
afterEach(async () => {
  for (const bus of buses.splice(0)) await bus.close();
});

async function node(channel: string): Promise<PgEventBus> {
  const bus = pgEventBus({ connectionString: TEST_PG_URL, channel, maxReconnectDelayMs: 200 });
  buses.push(bus);
  await bus.ready;
  return bus;
}

function next(bus: PgEventBus, taskId: string, match: (e: TaskEvent) => boolean = () => true): Promise<TaskEvent> {
  return new Promise((resolve) => {
    const off = bus.onTask(taskId, (event) => {
      if (!match(event)) return;
      off();
      resolve(event);
    });
  });
}

describe("PostgreSQL LISTEN/NOTIFY event bus", () => {
  it("delivers an event published on one node to a waiter on another", async () => {
    const channel = uniqueName("evt");
    const [a, b] = [await node(channel), await node(channel)];
    const arrived = next(b, "t1");
    a.publish({
      type: "status",
      taskId: "t1",
      status: "completed",
      sessionId: null,
      statusMessage: null,
      updatedAt: 1,
      createdAt: 0,
      ttlMs: null,
      pollIntervalMs: null,
    });
    expect(await arrived).toEqual({
      type: "status",
      taskId: "t1",
      status: "completed",
      sessionId: null,
      statusMessage: null,
      updatedAt: 1,
      createdAt: 0,
      ttlMs: null,
      pollIntervalMs: null,
    });
  });

  it("delivers a node's own events locally at once, and only once", async () => {
    const channel = uniqueName("evt");
    const a = await node(channel);
    const seen: TaskEvent[] = [];
    a.onTask("t1", (e) => seen.push(e));
    const remote = await node(channel);
    const remoteSaw = next(remote, "t1");
    a.publish({ type: "answer", taskId: "t1", inputId: "i1" });
    expect(seen).toHaveLength(1); // synchronously, before any round trip
    await remoteSaw; // by now the NOTIFY has come back to a as well
    await new Promise((r) => setTimeout(r, 50));
    expect(seen).toHaveLength(1);
  });

  it("keeps identical events of one batch apart (PostgreSQL folds identical payloads in a transaction)", async () => {
    const channel = uniqueName("evt");
    const [a, b] = [await node(channel), await node(channel)];
    const seen: TaskEvent[] = [];
    const three = new Promise<void>((resolve) =>
      b.onTask("t1", (e) => {
        seen.push(e);
        if (seen.length === 3) resolve();
      }),
    );
    for (let i = 0; i < 3; i++) a.publish({ type: "wake", taskId: "t1" });
    await three;
    expect(seen).toHaveLength(3);
  });

  it("does not cross channels (separate deployments on one database)", async () => {
    const [a, b] = [await node(uniqueName("evt")), await node(uniqueName("evt"))];
    const seen: TaskEvent[] = [];
    b.onTask("t1", (e) => seen.push(e));
    const own = next(a, "t1");
    a.publish({ type: "wake", taskId: "t1" });
    await own;
    await new Promise((r) => setTimeout(r, 100));
    expect(seen).toEqual([]);
  });

  it("re-establishes LISTEN after its connection is killed, and wakes local waiters to re-read the store", async () => {
    const channel = uniqueName("evt");
    const [a, b] = [await node(channel), await node(channel)];
    const woken = next(b, "t1", (e) => e.type === "wake");
    await pgQuery("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1", [`LISTEN ${channel}`]);
    await woken;
    expect(b.listening()).toBe(true);
    const arrived = next(b, "t1", (e) => e.type === "status");
    a.publish({
      type: "status",
      taskId: "t1",
      status: "failed",
      sessionId: null,
      statusMessage: "x",
      updatedAt: 2,
      createdAt: 0,
      ttlMs: null,
      pollIntervalMs: null,
    });
    expect((await arrived).type).toBe("status");
  });

  it("a node that stops hearing other nodes' events gets none, and its database session listens on nothing", async () => {
    const channel = uniqueName("evt");
    const [a, b, c] = [await node(channel), await node(channel), await node(channel)];
    await b.hearOthers(false);
    const seen: TaskEvent[] = [];
    b.onAny((e) => seen.push(e));
    // c hears a's event: by then PostgreSQL has delivered it to every listener there was.
    const heard = next(c, "t1");
    a.publish({ type: "answer", taskId: "t1", inputId: "i1" });
    await heard;
    await new Promise((r) => setTimeout(r, 50));
    expect(seen).toEqual([]);
    const listeners = await pgQuery("SELECT count(*) AS n FROM pg_stat_activity WHERE query = $1", [`LISTEN ${channel}`]);
    expect(Number((listeners.rows[0] as { n: string }).n)).toBe(2);
  });

  it("a node that hears again gets other nodes' events, and first wakes its waiters to re-read what they missed", async () => {
    const channel = uniqueName("evt");
    const [a, b] = [await node(channel), await node(channel)];
    await b.hearOthers(false);
    const woken = next(b, "t1", (e) => e.type === "wake");
    const anyWoken = new Promise<TaskEvent>((resolve) => b.onAny((e) => e.type === "wake" && e.taskId === "*" && resolve(e)));
    await b.hearOthers(true);
    await woken;
    await anyWoken;
    const arrived = next(b, "t1", (e) => e.type === "answer");
    a.publish({ type: "answer", taskId: "t1", inputId: "i2" });
    expect(await arrived).toEqual({ type: "answer", taskId: "t1", inputId: "i2" });
  });

  it("after its LISTEN connection is lost, a node that asked to hear nothing comes back still hearing nothing", async () => {
    const channel = uniqueName("evt");
    const [a, b] = [await node(channel), await node(channel)];
    await b.hearOthers(false);
    const reconnected = next(b, "t1", (e) => e.type === "wake");
    await pgQuery("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1", [`UNLISTEN ${channel}`]);
    await reconnected;
    const seen: TaskEvent[] = [];
    b.onAny((e) => e.type !== "wake" && seen.push(e));
    const own = next(a, "t2");
    a.publish({ type: "answer", taskId: "t2", inputId: "i3" });
    await own;
    await new Promise((r) => setTimeout(r, 150));
    expect(seen).toEqual([]);
    expect(b.listening()).toBe(true);
  });

  it("cuts overlong progress messages so the NOTIFY payload stays under PostgreSQL's limit", async () => {
    const channel = uniqueName("evt");
    const [a, b] = [await node(channel), await node(channel)];
    const arrived = next(b, "t1");
    a.publish({
      type: "progress",
      taskId: "t1",
      sessionId: null,
      progressToken: 1,
      progress: { progress: 1, message: "x".repeat(20_000) },
    });
    const event = await arrived;
    expect(event.type === "progress" && event.progress.message?.length).toBe(2000);
  });

  it("cuts overlong status messages the same way", async () => {
    const channel = uniqueName("evt");
    const [a, b] = [await node(channel), await node(channel)];
    const arrived = next(b, "t1");
    a.publish({
      type: "status",
      taskId: "t1",
      status: "failed",
      sessionId: null,
      statusMessage: "y".repeat(20_000),
      updatedAt: 3,
      createdAt: 0,
      ttlMs: 1,
      pollIntervalMs: 1,
    });
    const event = await arrived;
    expect(event.type === "status" && event.statusMessage?.length).toBe(2000);
  });

  it("carries a terminal status event's outcome to other nodes, and leaves out one too large for NOTIFY (waiters then read the store)", async () => {
    const channel = uniqueName("evt");
    const [a, b] = [await node(channel), await node(channel)];
    const small = next(b, "t3");
    const status = {
      type: "status",
      status: "completed",
      sessionId: null,
      statusMessage: null,
      updatedAt: 3,
      createdAt: 0,
      ttlMs: 1,
      pollIntervalMs: 1,
    } as const;
    a.publish({ ...status, taskId: "t3", outcome: { kind: "result", value: { content: [] } } });
    expect(await small).toMatchObject({ outcome: { kind: "result", value: { content: [] } } });
    const large = next(b, "t4");
    a.publish({ ...status, taskId: "t4", outcome: { kind: "result", value: { text: "x".repeat(MAX_NOTIFY_BYTES) } } });
    const event = await large;
    expect(event).toMatchObject({ type: "status", status: "completed" });
    expect(event).not.toHaveProperty("outcome");
  });

  it("drops an event too large for NOTIFY (a big routed reply) alone, with an error log; the rest of its batch still crosses", async () => {
    const channel = uniqueName("evt");
    const errors: Array<Record<string, unknown>> = [];
    const logger = { ...silentLogger, error: (obj: object) => void errors.push(obj as Record<string, unknown>) };
    const a = pgEventBus({ connectionString: TEST_PG_URL, channel, logger });
    buses.push(a);
    await a.ready;
    const b = await node(channel);
    const seenLocally: TaskEvent[] = [];
    a.onTask("node:b", (e) => seenLocally.push(e));
    const remote: TaskEvent[] = [];
    b.onTask("node:b", (e) => remote.push(e));
    const after = next(b, "t2");
    // Same tick: one batched NOTIFY statement.
    a.publish({
      type: "reply",
      taskId: "node:b",
      sessionId: "s",
      message: { jsonrpc: "2.0", id: "mcpr.b.0", result: { text: "z".repeat(MAX_NOTIFY_BYTES) } },
    });
    a.publish({ type: "wake", taskId: "t2" });
    expect(await after).toEqual({ type: "wake", taskId: "t2" });
    expect(remote).toEqual([]);
    expect(seenLocally).toHaveLength(1); // local subscribers still get it
    expect(errors).toEqual([expect.objectContaining({ taskId: "node:b", type: "reply", limit: MAX_NOTIFY_BYTES })]);
  });

  it("sends an event too large for NOTIFY through the overflow table when it has one: a long answer crosses nodes whole", async () => {
    const schema = uniqueName("evt");
    const store = postgresStore(TEST_PG_URL, { schema });
    await store.migrate();
    try {
      const overflowTable = tablesOf(schema).events;
      const a = pgEventBus({ connectionString: TEST_PG_URL, channel: schema, overflowTable });
      const b = pgEventBus({ connectionString: TEST_PG_URL, channel: schema, overflowTable });
      buses.push(a, b);
      await Promise.all([a.ready, b.ready]);
      const arrived = next(b, "node:b");
      const reply: TaskEvent = {
        type: "reply",
        taskId: "node:b",
        sessionId: "s",
        message: { jsonrpc: "2.0", id: "mcpr.b.0", result: { text: "z".repeat(50_000) } },
      };
      a.publish(reply);
      expect(await arrived).toEqual(reply);
      expect((await pgQuery(`SELECT count(*)::int AS n FROM ${overflowTable}`)).rows[0]).toEqual({ n: 1 });
    } finally {
      await store.close();
      await pgQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    }
  });

  it("refuses an overflow table name that is not a plain schema.table", () => {
    expect(() => pgEventBus({ connectionString: TEST_PG_URL, channel: "c", overflowTable: "x; DROP TABLE y" })).toThrow(
      /invalid overflow table/,
    );
  });

  it("refuses a channel name that is not a plain identifier", () => {
    expect(() => pgEventBus({ connectionString: TEST_PG_URL, channel: "x; DROP TABLE y" })).toThrow(/invalid NOTIFY channel/);
  });

  it("hands out the NOTIFY of an event for a write to carry only on a store's database, never ahead of an event of the same task still going out", async () => {
    const channel = uniqueName("evt");
    const plain = await node(channel);
    expect(plain.notifyFor).toBeUndefined();
    const a = pgEventBus({ connectionString: TEST_PG_URL, channel, maxReconnectDelayMs: 200, storeOnSameDatabase: true });
    buses.push(a);
    await a.ready;
    const b = await node(channel);
    const done: TaskEvent = {
      type: "status",
      taskId: "t9",
      status: "completed",
      sessionId: null,
      statusMessage: null,
      updatedAt: 2,
      createdAt: 0,
      ttlMs: null,
      pollIntervalMs: null,
      outcome: null,
    };
    // A progress event of t9 is still in a's outbox: the outcome's NOTIFY must follow it, not ride ahead.
    const progressArrived = next(b, "t9", (e) => e.type === "progress");
    a.publish({ type: "progress", taskId: "t9", sessionId: null, progressToken: 1, progress: { progress: 1 } });
    expect(a.notifyFor!(done)).toBeNull();
    expect(a.notifyFor!({ ...done, taskId: "t10" })).not.toBeNull();
    await progressArrived;
    for (let i = 0; a.notifyFor!(done) === null; i++) {
      if (i > 100) throw new Error("the outbox never drained");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // Sent by a write (here: by hand, as the store's statement would), heard on b as the event.
    const notify = a.notifyFor!(done)!;
    expect(notify.channel).toBe(channel);
    const arrived = next(b, "t9", (e) => e.type === "status");
    await pgQuery("SELECT pg_notify($1, $2)", [notify.channel, notify.payload]);
    expect(await arrived).toEqual(done);
  });
});
