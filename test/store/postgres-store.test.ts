import pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { allowedSources } from "../../src/core/task-status.js";
import type { TaskOutcome } from "../../src/core/task.js";
import {
  DEFAULT_POSTGRES_SCHEMA,
  postgresStore,
  type PostgresStore,
  type PostgresStoreOptions,
} from "../../src/store/postgres/postgres-store.js";
import { COUNTS_VERSION, migrate, SCHEMA_VERSION } from "../../src/store/postgres/schema.js";
import { QUEUED_SQL, tablesOf } from "../../src/store/postgres/sql.js";
import { sweepStatements } from "../../src/store/postgres/sweep-statements.js";
import { pgQuery, TEST_PG_URL, uniqueName } from "../support/postgres.js";
import { newTask, storeContract } from "../../src/testing/store-contract.js";
import { leaseContract } from "../../src/testing/lease-contract.js";

/**
 * The test connections skip waiting for the WAL flush on commit: 3× faster DDL and writes, and no
 * difference to what is tested (commits stay atomic and immediately visible to other sessions).
 */
const URL_FAST = (() => {
  const url = new URL(TEST_PG_URL);
  url.searchParams.set("options", "-c synchronous_commit=off");
  return url.toString();
})();

/** Every migration, applied once each. */
const ALL_VERSIONS = Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1);

/** Every schema this file creates, dropped at the end. */
const schemas: string[] = [];
const freshSchema = (): string => {
  const schema = uniqueName("mcp_tasks_test");
  schemas.push(schema);
  return schema;
};

/**
 * The contract suites expect an empty store from every make(). Each suite gets its own schema,
 * migrated once, and every make() opens a new store on it after emptying the tables: the same
 * isolation as a fresh schema per test, without paying for the DDL a hundred times.
 */
function emptyStoreFactory(): () => Promise<PostgresStore> {
  const schema = freshSchema();
  return async () => {
    const store = postgresStore(URL_FAST, { schema, poolSize: 4 });
    await store.migrate();
    // Inputs, timelines and waits go with their tasks (ON DELETE CASCADE); events are kept apart.
    await pgQuery(
      `DELETE FROM "${schema}".tasks; DELETE FROM "${schema}".meta; DELETE FROM "${schema}".workers; DELETE FROM "${schema}".wait_events; DELETE FROM "${schema}".tool_pauses`,
    );
    return store;
  };
}

afterAll(async () => {
  if (schemas.length > 0) await pgQuery(`DROP SCHEMA IF EXISTS ${schemas.map((s) => `"${s}"`).join(", ")} CASCADE`);
});

storeContract("postgresStore", emptyStoreFactory());
leaseContract("postgresStore", emptyStoreFactory());

describe("postgresStore: schema, migrations and connections", () => {
  const opened: PostgresStore[] = [];
  const open = (schema: string, options: Omit<PostgresStoreOptions, "schema"> = {}, url = URL_FAST): PostgresStore => {
    const store = postgresStore(url, { poolSize: 2, ...options, schema });
    opened.push(store);
    return store;
  };
  const migrationRows = async (schema: string): Promise<number[]> =>
    (await pgQuery(`SELECT version FROM "${schema}".migrations ORDER BY version`)).rows.map((r: { version: number }) => r.version);

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });

  it("opens nothing until first use, then creates the schema and records the migration once", async () => {
    const schema = freshSchema();
    const store = open(schema);
    expect(store.schema).toBe(schema);
    expect((await pgQuery("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema])).rowCount).toBe(0);
    await store.create(newTask());
    expect(await migrationRows(schema)).toEqual(ALL_VERSIONS);
    await store.migrate();
    expect(await migrationRows(schema)).toEqual(ALL_VERSIONS);
  });

  it("4 stores starting at once on one fresh schema: all work, the schema is migrated once", async () => {
    const schema = freshSchema();
    const stores = [1, 2, 3, 4].map(() => open(schema));
    const created = await Promise.all(stores.map((store) => store.create(newTask())));
    expect(await migrationRows(schema)).toEqual(ALL_VERSIONS);
    for (const store of stores) expect(await store.countActive("alice")).toBe(4);
    const secrets = await Promise.all(stores.map((store) => store.secret()));
    for (const secret of secrets) expect(secret.equals(secrets[0] ?? Buffer.alloc(0))).toBe(true);
    expect((await stores[3]?.get(created[0]?.id ?? "", { owner: "alice" }))?.id).toBe(created[0]?.id);
  });

  it("reopening keeps tasks, outcomes, inputs, leases, the timeline and the secret, and migrates nothing", async () => {
    const schema = freshSchema();
    const outcome: TaskOutcome = { kind: "error", error: { code: -32000, message: "boom", data: { at: [1, 2] } } };
    const first = open(schema);
    const done = await first.create(newTask());
    const waiting = await first.create(newTask({ owner: null, createdAt: done.createdAt + 1 }));
    await first.annotate(done.id, { progress: { progress: 1, total: 2 }, now: done.createdAt + 1 });
    const failed = await first.transition(done.id, allowedSources("failed"), "failed", {
      now: done.createdAt + 2,
      statusMessage: "it broke",
      outcome,
    });
    await first.claim("w1", 1, 60_000, waiting.createdAt + 5);
    await first.transition(waiting.id, allowedSources("input_required"), "input_required", { now: waiting.createdAt + 6 });
    await first.enqueueInput({ taskId: waiting.id, id: "q1", method: "elicitation/create", params: { m: 1 }, createdAt: 5 });
    const secret = await first.secret();
    await first.close();

    const second = open(schema);
    expect(await second.get(done.id, { owner: "alice" })).toEqual(failed);
    expect(failed?.progress).toEqual({ progress: 1, total: 2 });
    expect((await second.get(waiting.id, { owner: null }))?.status).toBe("input_required");
    expect((await second.pendingInputs(waiting.id)).map((i) => i.id)).toEqual(["q1"]);
    expect(await second.renew("w1", [waiting.id], 60_000, waiting.createdAt + 10)).toEqual([waiting.id]);
    expect((await second.history(done.id)).map((c) => c.status)).toEqual(["working", "failed"]);
    expect((await second.secret()).equals(secret)).toBe(true);
    expect(await migrationRows(schema)).toEqual(ALL_VERSIONS);
  });

  it("brings a schema written by the first version up to date, keeping its tasks (a rolling upgrade)", async () => {
    const schema = freshSchema();
    const old = open(schema);
    const task = await old.create(newTask());
    // What version 1 left: none of the later tables, one migration recorded.
    await pgQuery(
      `DROP TABLE "${schema}".events, "${schema}".task_checkpoints, "${schema}".stream_events, "${schema}".task_counts, "${schema}".task_count_deltas, "${schema}".workers, "${schema}".task_keys, "${schema}".expired_tasks, "${schema}".webhook_outbox, "${schema}".webhook_disabled, "${schema}".tool_pauses;
       DROP FUNCTION "${schema}".task_counts_delta() CASCADE;
       DROP FUNCTION "${schema}".webhook_outbox_moved() CASCADE;
       DROP FUNCTION "${schema}".task_keys_deleted() CASCADE;
       ALTER TABLE "${schema}".tasks DROP COLUMN leased_at, DROP COLUMN claim_generation, DROP COLUMN fetched_at;
       DROP INDEX "${schema}".tasks_queue_owner;
       DROP TABLE "${schema}".task_waits, "${schema}".wait_events;
       ALTER TABLE "${schema}".tasks DROP COLUMN wait_mode;
       ALTER TABLE "${schema}".task_history DROP COLUMN node;
       CREATE INDEX tasks_queue ON "${schema}".tasks (created_at, id) WHERE status = 'working' AND lease_owner IS NULL;
       DELETE FROM "${schema}".migrations WHERE version > 1`,
    );
    await old.close();
    const upgraded = open(schema);
    expect(await upgraded.get(task.id, { any: true })).toEqual(task);
    expect(await migrationRows(schema)).toEqual(ALL_VERSIONS);
    expect((await pgQuery(`SELECT count(*)::int AS n FROM "${schema}".events`)).rows[0]).toEqual({ n: 0 });
  });

  it("the counts migration counts the tasks an older schema holds, and the counts stay exact after", async () => {
    const schema = freshSchema();
    const pool = new pg.Pool({ connectionString: URL_FAST, max: 1 });
    try {
      await migrate(pool, tablesOf(schema), schema, Date.now, COUNTS_VERSION - 1);
      const insert = `INSERT INTO "${schema}".tasks (id, owner, method, name, request, origin, status, created_at, updated_at, retryable)
                      VALUES ($1, $2, 'tools/call', $3, '{}', '{"sessionId":null,"progressToken":null,"accepts":[]}', $4, 100, 100, false)`;
      await pool.query(insert, ["t-1", "alice", "old", "working"]);
      await pool.query(insert, ["t-2", "alice", "old", "failed"]);
      await pool.query(insert, ["t-3", null, "old", "failed"]);
      await pool.query(insert, ["t-4", "bob", "other", "completed"]);
    } finally {
      await pool.end();
    }
    const store = open(schema);
    expect(await store.countByStatus({ scope: { any: true } })).toEqual({
      working: 1,
      input_required: 0,
      completed: 1,
      failed: 2,
      cancelled: 0,
    });
    expect(await store.countByStatus({ scope: { owner: null } })).toEqual({
      working: 0,
      input_required: 0,
      completed: 0,
      failed: 1,
      cancelled: 0,
    });
    expect(await store.countByStatus({ scope: { owner: "alice" }, name: "old" })).toEqual({
      working: 1,
      input_required: 0,
      completed: 0,
      failed: 1,
      cancelled: 0,
    });
    await store.transition("t-1", allowedSources("cancelled"), "cancelled", { now: 300 });
    expect(await store.countByStatus({ scope: { owner: "alice" } })).toEqual({
      working: 0,
      input_required: 0,
      completed: 0,
      failed: 1,
      cancelled: 1,
    });
  });

  it("schemas are separate stores with separate secrets", async () => {
    const a = open(freshSchema());
    const b = open(freshSchema());
    const task = await a.create(newTask());
    expect(await b.get(task.id, { any: true })).toBeNull();
    expect((await a.secret()).equals(await b.secret())).toBe(false);
  });

  it("refuses a schema written by a newer version", async () => {
    const schema = freshSchema();
    await open(schema).migrate();
    await pgQuery(`INSERT INTO "${schema}".migrations (version, applied_at) VALUES ($1, 0)`, [SCHEMA_VERSION + 1]);
    await expect(open(schema).get("x", { any: true })).rejects.toThrow(/newer than this build supports/);
  });

  it.each(["", "Tasks", "a-b", 'x"; DROP TABLE y; --', "pg_tasks", "1abc", "a".repeat(64), "tasks.public"])(
    "rejects the schema name %j before any SQL",
    (schema) => {
      expect(() => postgresStore(URL_FAST, { schema })).toThrow(/Invalid PostgreSQL schema name/);
    },
  );

  it('defaults to the schema "mcp_tasks"', async () => {
    const store = postgresStore(URL_FAST);
    expect(store.schema).toBe(DEFAULT_POSTGRES_SCHEMA);
    expect(DEFAULT_POSTGRES_SCHEMA).toBe("mcp_tasks");
    await store.close();
  });

  it("JSON is kept as written: key order and \\u0000 round-trip (JSONB would reorder and refuse them)", async () => {
    const store = open(freshSchema());
    const task = await store.create(newTask({ request: { zeta: 1, alpha: { b: 2, a: 1 }, text: "nul:\u0000:end" } }));
    const outcome: TaskOutcome = { kind: "result", value: { content: [{ type: "text", text: "a\u0000b" }], z: 1, a: 2 } };
    await store.transition(task.id, allowedSources("completed"), "completed", { now: task.createdAt + 1, outcome });
    const read = await store.get(task.id, { any: true });
    expect(JSON.stringify(read?.request)).toBe(JSON.stringify({ zeta: 1, alpha: { b: 2, a: 1 }, text: "nul:\u0000:end" }));
    expect(JSON.stringify(read?.outcome)).toBe(JSON.stringify(outcome));
  });

  it('orders ids bytewise (COLLATE "C"), like the other stores, whatever the database\'s collation', async () => {
    const store = open(freshSchema());
    const ids = ["b-task", "B-task", "a-task", "_task", "A-task", "Z-task"];
    for (const id of ids) await store.create(newTask({ id }));
    expect((await store.list("alice", null, 10)).map((t) => t.id)).toEqual([...ids].sort());
    expect((await store.search({ scope: { any: true } }, null, 10)).map((t) => t.id)).toEqual([...ids].sort().reverse());
  });

  it("operations fail with the connection error (not hang) when the server is unreachable, and retry the migration later", async () => {
    const store = open(freshSchema(), {}, "postgres://postgres@127.0.0.1:1/test");
    await expect(store.get("x", { any: true })).rejects.toThrow(/ECONNREFUSED|connect/);
    await expect(store.migrate()).rejects.toThrow(/ECONNREFUSED|connect/);
  });

  it("a connection the server drops is replaced: the next operations work (and the drop is logged)", async () => {
    const appName = uniqueName("mcp_tasks_drop");
    const url = new URL(URL_FAST);
    url.searchParams.set("application_name", appName);
    const warnings: string[] = [];
    const logger = { info: () => {}, warn: (_obj: object, msg?: string) => void warnings.push(msg ?? "") };
    const store = open(freshSchema(), { logger, poolSize: 1 }, url.toString());
    const task = await store.create(newTask());
    const killed = await pgQuery("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [appName]);
    expect(killed.rowCount).toBe(1);
    await expect.poll(() => warnings.length, { timeout: 5000 }).toBeGreaterThan(0);
    expect((await store.get(task.id, { any: true }))?.id).toBe(task.id);
    expect(warnings[0]).toMatch(/idle PostgreSQL connection failed/);
  });

  it("creations made at once (batched into shared statements) each store their own task; a taken id fails only its own creation", async () => {
    const store = open(freshSchema(), { poolSize: 2 });
    const existing = await store.create(newTask());
    const awkward = { text: 'quote " backslash \\ braces {} comma , nul \u0000 ünïcode', list: [null, "{a,b}"] };
    const tasks = Array.from({ length: 40 }, (_, i) =>
      newTask({
        owner: i % 3 === 0 ? null : `owner-${i % 5}`,
        request: { i, awkward },
        ttlMs: i % 4 === 0 ? null : 1000 + i,
        pollIntervalMs: i % 2 ? null : 500,
        retryable: i % 2 === 0,
      }),
    );
    const repeated = newTask();
    const results = await Promise.allSettled(
      [...tasks, newTask({ id: existing.id }), repeated, { ...repeated }].map((task) => store.create(task)),
    );
    const created = results.slice(0, 40).map((r) => (r.status === "fulfilled" ? r.value : r.reason));
    for (const [i, task] of tasks.entries()) {
      expect(created[i]).toMatchObject({
        id: task.id,
        owner: task.owner,
        request: task.request,
        ttlMs: task.ttlMs,
        pollIntervalMs: task.pollIntervalMs,
        retryable: task.retryable,
        status: "working",
      });
      expect(await store.get(task.id, { owner: task.owner })).toEqual(created[i]);
      expect((await store.history(task.id)).map((h) => h.status)).toEqual(["working"]);
    }
    expect(results[40]).toMatchObject({ status: "rejected", reason: expect.objectContaining({ reason: "duplicate_task" }) });
    expect(
      results
        .slice(41)
        .map((r) => r.status)
        .sort(),
    ).toEqual(["fulfilled", "rejected"]);
    expect(await store.get(existing.id, { any: true })).toEqual(existing);
  });

  it("status changes made at once (batched into shared statements) each apply their own compare-and-set, a task's second change judged after its first", async () => {
    const store = open(freshSchema(), { poolSize: 2 });
    const tasks = await Promise.all(Array.from({ length: 30 }, () => store.create(newTask())));
    const at = (ms: number): number => tasks[0]!.createdAt + ms;
    const outcome = (i: number): TaskOutcome => ({ kind: "result", value: { i, text: 'a "quoted", {braced} value' } });
    const move = (i: number) =>
      store.transition(tasks[i]!.id, ["working"], i % 2 ? "completed" : "input_required", {
        now: at(1000 + i),
        statusMessage: `m${i}`,
        ...(i % 2 ? { outcome: outcome(i) } : {}),
      });
    // Two statements in flight first: every change after them waits, and goes out in one batch.
    const ahead = [move(28), move(29)];
    const moves = Array.from({ length: 28 }, (_, i) => move(i));
    // Task 0 a second time in that batch: from input_required, so it holds only after the first move.
    const second = store.transition(tasks[0]!.id, ["input_required"], "completed", {
      now: at(5000),
      statusMessage: null,
      outcome: outcome(0),
    });
    // A compare-and-set that fails: task 1 is not input_required.
    const refused = store.transition(tasks[1]!.id, ["input_required"], "cancelled", { now: at(5000), statusMessage: "no" });
    const moved = await Promise.all([...moves, ...ahead]);
    for (const [n, task] of moved.entries()) {
      expect(task).toMatchObject({
        id: tasks[n]!.id,
        status: n % 2 ? "completed" : "input_required",
        statusMessage: `m${n}`,
        updatedAt: at(1000 + n),
      });
    }
    expect(await second).toMatchObject({ id: tasks[0]!.id, status: "completed", statusMessage: null, outcome: outcome(0) });
    expect((await store.history(tasks[0]!.id)).map((h) => h.status)).toEqual(["working", "input_required", "completed"]);
    expect(await refused).toBeNull();
    expect(await store.get(tasks[1]!.id, { any: true })).toMatchObject({ status: "completed", outcome: outcome(1) });
  });

  it("lookups made at once (batched into shared statements) each get their own task, scoped by owner", async () => {
    const store = open(freshSchema(), { poolSize: 2 });
    const owned = await store.create(newTask({ owner: "alice" }));
    const unowned = await store.create(newTask({ owner: null }));
    const lookups: Array<[string, { owner: string | null } | { any: true }, unknown]> = [
      [owned.id, { owner: "alice" }, owned],
      [owned.id, { owner: "mallory" }, null],
      [owned.id, { owner: null }, null],
      [owned.id, { any: true }, owned],
      [unowned.id, { owner: null }, unowned],
      [unowned.id, { owner: "alice" }, null],
      ["no-such-task", { any: true }, null],
      [`${owned.id}\u0000`, { any: true }, null],
    ];
    const answers = await Promise.all([...lookups, ...lookups].map(([id, scope]) => store.get(id, scope)));
    expect(answers).toEqual([...lookups, ...lookups].map(([, , expected]) => expected));
  });

  it("results marked fetched at once (batched into shared statements) are each the first fetch once, never of a task still running", async () => {
    const store = open(freshSchema(), { poolSize: 2 });
    const T0 = 1_700_000_000_000;
    const done = await Promise.all([1, 2, 3].map(() => store.create(newTask())));
    for (const task of done)
      await store.transition(task.id, ["working"], "completed", { now: T0 + 5, outcome: { kind: "result", value: { content: [] } } });
    const running = await store.create(newTask());
    const calls: Array<[string, boolean]> = [
      [done[0]!.id, true],
      [done[1]!.id, true],
      [done[0]!.id, false],
      [running.id, false],
      ["no-such-task", false],
      [`${done[2]!.id}\u0000`, false],
      [done[2]!.id, true],
      [done[1]!.id, false],
    ];
    // One is sent alone, the rest wait for it and go out as one statement.
    const answers = await Promise.all(calls.map(([id], i) => store.markFetched(id, T0 + 10 + i)));
    expect(answers).toEqual(calls.map(([, first]) => first));
    expect(await Promise.all(done.map((task) => store.markFetched(task.id, T0 + 50)))).toEqual([false, false, false]);
    const { rows } = await pgQuery(`SELECT id, fetched_at FROM "${store.schema}".tasks WHERE fetched_at IS NOT NULL ORDER BY fetched_at`);
    expect(rows.map((row: { id: string }) => row.id)).toEqual([done[0]!.id, done[1]!.id, done[2]!.id]);
  });

  /**
   * Runs `check` with the plans of a fresh, migrated, empty schema: sequential scans are forbidden
   * (on an empty table one is cheapest), so a plan shows which index a query can use.
   */
  async function withPlans(
    check: (plan: (sql: string, values?: unknown[]) => Promise<string>, schema: string) => Promise<void>,
  ): Promise<void> {
    const schema = freshSchema();
    await open(schema).migrate();
    const client = new pg.Client({ connectionString: TEST_PG_URL });
    await client.connect();
    try {
      await client.query("SET enable_seqscan = off");
      await check(
        async (sql, values = []) =>
          (await client.query<{ "QUERY PLAN": string }>({ text: `EXPLAIN ${sql}`, values })).rows.map((r) => r["QUERY PLAN"]).join("\n"),
        schema,
      );
    } finally {
      await client.end();
    }
  }

  it("the hot statements use their indexes", async () => {
    await withPlans(async (plan, schema) => {
      const t = `"${schema}".tasks`;
      expect(await plan(`SELECT * FROM ${t} WHERE owner = 'a' AND (created_at, id) > (1, 'x') ORDER BY created_at, id LIMIT 5`)).toMatch(
        /tasks_owner_created/,
      );
      expect(
        await plan(
          `SELECT * FROM ${t} WHERE status IN ('completed', 'failed', 'cancelled') AND expires_at <= 5 ORDER BY expires_at, id LIMIT 5`,
        ),
      ).toMatch(/tasks_expires/);
      expect(await plan(`SELECT * FROM ${t} ORDER BY created_at DESC, id DESC LIMIT 5`)).toMatch(/tasks_created/);
      expect(await plan(`SELECT id FROM ${t} WHERE ${QUEUED_SQL} ORDER BY created_at, id LIMIT 5 FOR UPDATE SKIP LOCKED`)).toMatch(
        /tasks_queue/,
      );
      expect(await plan(`SELECT count(*) FROM ${t} WHERE ${QUEUED_SQL}`)).toMatch(/tasks_queue/);
      // Durable waits: timers by due time, a new event's waits and a late wait's event by (owner, name).
      const waits = `"${schema}".task_waits`;
      expect(
        await plan(`SELECT task_id FROM ${waits} WHERE due_at IS NOT NULL AND due_at <= 5 ORDER BY due_at LIMIT 5 FOR UPDATE SKIP LOCKED`),
      ).toMatch(/task_waits_due/);
      expect(await plan(`SELECT task_id FROM ${waits} WHERE kind = 'event' AND owner_key = 'Oa' AND event_name = 'x'`)).toMatch(
        /task_waits_event/,
      );
      expect(
        await plan(`SELECT seq FROM "${schema}".wait_events WHERE owner_key = 'Oa' AND name = 'x' AND seq > 3 ORDER BY seq LIMIT 1`),
      ).toMatch(/wait_events_match/);
      expect(await plan(`SELECT count(*) FROM ${t} WHERE wait_mode = 'parked'`)).toMatch(/tasks_waiting/);
      expect(
        await plan(`SELECT * FROM ${t} WHERE lease_owner IS NOT NULL AND lease_expires_at <= 5 ORDER BY lease_expires_at, id LIMIT 5`),
      ).toMatch(/tasks_leases/);
    });
  });

  it("the per-owner caps read the kept counts by primary key, never the owner's tasks", async () => {
    await withPlans(async (plan, schema) => {
      const sweeps = sweepStatements(tablesOf(schema));
      for (const query of [sweeps.countActive, sweeps.countStored]) {
        const shown = await plan(query.text, ["Oalice"]);
        expect(shown).toMatch(/task_counts_pkey/);
        expect(shown).not.toMatch(/ on tasks\b|tasks_owner_created|tasks_active/);
      }
    });
  });

  it("the per-owner counts stay exact across status changes and the folds of their deltas", async () => {
    const store = open(freshSchema());
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const task = newTask({ owner: i % 3 === 0 ? null : "alice" });
      ids.push(task.id);
      await store.create(task);
    }
    expect(await store.countStored("alice")).toBe(20);
    expect(await store.countStored(null)).toBe(10);
    expect(await store.countActive("alice")).toBe(20);
    // Every third of alice's tasks ends; the counts are read between folds and after them.
    const alices = ids.filter((_, i) => i % 3 !== 0);
    for (const [i, id] of alices.entries()) {
      if (i % 3 === 0)
        await store.transition(id, ["working"], "completed", { now: 1_000, outcome: { kind: "result", value: { content: [] } } });
    }
    expect(await store.countActive("alice")).toBe(13);
    expect(await store.countStored("alice")).toBe(20);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(await store.countActive("alice")).toBe(13);
    expect(await store.countStored("alice")).toBe(20);
    expect(await store.countActive(null)).toBe(10);
    expect(await store.countStored("bob")).toBe(0);
  });
});
