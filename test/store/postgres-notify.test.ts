/**
 * The PostgreSQL store sends the NOTIFY given with a creation or a status change from the write's
 * own statement: heard once the write commits, never for a write that did not happen (a taken id,
 * a compare-and-set that failed), one per row in a batched statement, and none for a call
 * without one in the same batch.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresStore, type PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { newTask } from "../../src/testing/store-contract.js";
import { pgQuery, TEST_PG_URL, uniqueName } from "../support/postgres.js";

const schema = uniqueName("notify");
const channel = `ch_${schema}`;
let store: PostgresStore;
let listener: pg.Client;
const heard: string[] = [];

beforeAll(async () => {
  store = postgresStore(TEST_PG_URL, { schema });
  listener = new pg.Client({ connectionString: TEST_PG_URL });
  await listener.connect();
  listener.on("notification", (message) => {
    if (message.channel === channel) heard.push(message.payload ?? "");
  });
  await listener.query(`LISTEN ${channel}`);
});

afterAll(async () => {
  await listener.end();
  await store.close();
  await pgQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
});

/** What the listener heard once a round trip on its own connection has passed (NOTIFYs arrive before it returns). */
async function heardNow(): Promise<string[]> {
  await listener.query("SELECT 1");
  return heard.splice(0);
}

describe("postgres store: NOTIFY with the write", () => {
  it("says it sends them", () => {
    expect(store.sendsNotify).toBe(true);
  });

  it("sends a creation's NOTIFY once it is stored, and none for an id already taken", async () => {
    const task = newTask();
    await store.create(task, { channel, payload: "created-1" });
    expect(await heardNow()).toEqual(["created-1"]);
    await expect(store.create(task, { channel, payload: "created-again" })).rejects.toThrow();
    expect(await heardNow()).toEqual([]);
  });

  it("sends a status change's NOTIFY when the compare-and-set holds, and none when it fails", async () => {
    const task = await store.create(newTask());
    const moved = await store.transition(task.id, ["working"], "completed", {
      now: task.createdAt + 5,
      statusMessage: null,
      outcome: { kind: "result", value: { ok: true } },
      notify: { channel, payload: "completed" },
    });
    expect(moved?.status).toBe("completed");
    expect(await heardNow()).toEqual(["completed"]);
    const late = await store.transition(task.id, ["working"], "failed", {
      now: task.createdAt + 6,
      statusMessage: "late",
      notify: { channel, payload: "late" },
    });
    expect(late).toBeNull();
    expect(await heardNow()).toEqual([]);
  });

  it("sends one NOTIFY per written row of a batched statement, none for the calls of the batch without one", async () => {
    const tasks = Array.from({ length: 12 }, () => newTask());
    // Made together, they share statements (the coalescer batches what waits for the one in flight).
    const created = await Promise.all(tasks.map((task, i) => store.create(task, i % 3 === 2 ? undefined : { channel, payload: `c${i}` })));
    expect(created.map((t) => t.id)).toEqual(tasks.map((t) => t.id));
    expect((await heardNow()).sort()).toEqual(tasks.flatMap((_, i) => (i % 3 === 2 ? [] : [`c${i}`])).sort());

    // One of them moved first, so its change in the batch fails its compare-and-set.
    await store.transition(tasks[0]!.id, ["working"], "cancelled", { now: tasks[0]!.createdAt + 1, statusMessage: null });
    const moved = await Promise.all(
      tasks.map((task, i) =>
        store.transition(task.id, ["working"], "completed", {
          now: task.createdAt + 2,
          statusMessage: null,
          outcome: { kind: "result", value: { i } },
          ...(i % 3 === 1 ? {} : { notify: { channel, payload: `m${i}` } }),
        }),
      ),
    );
    expect(moved.map((t) => t?.status ?? null)).toEqual(tasks.map((_, i) => (i === 0 ? null : "completed")));
    expect((await heardNow()).sort()).toEqual(tasks.flatMap((_, i) => (i === 0 || i % 3 === 1 ? [] : [`m${i}`])).sort());
  });
});
