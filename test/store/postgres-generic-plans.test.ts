/**
 * The statements every task of a cluster goes through in batches keep one generic plan once
 * PostgreSQL has tried five custom ones, on a tasks table with statistics. Planned anew on every
 * run, a batched lookup costs about twice its execution in server CPU.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newTaskId } from "../../src/core/task-id.js";
import { postgresStore } from "../../src/store/postgres/postgres-store.js";
import { tablesOf, type Statement } from "../../src/store/postgres/sql.js";
import { sweepStatements } from "../../src/store/postgres/sweep-statements.js";
import { taskStatements } from "../../src/store/postgres/task-statements.js";
import { freshSchemas, TEST_PG_URL } from "../support/postgres.js";

const schemas = freshSchemas("mcp_tasks_plans");
const schema = schemas.next();
const tasks = taskStatements(tablesOf(schema));
const sweeps = sweepStatements(tablesOf(schema));
let client: pg.Client;
let finished: string[] = [];

beforeAll(async () => {
  const store = postgresStore(TEST_PG_URL, { schema, poolSize: 1 });
  await store.migrate();
  await store.close();
  client = new pg.Client({ connectionString: TEST_PG_URL });
  await client.connect();
  // A table like a cluster's after a while: thousands of finished tasks, a few live ones, analyzed.
  await client.query(
    `INSERT INTO "${schema}".tasks (id, owner, method, name, request, origin, status, created_at, updated_at, ttl_ms, expires_at, poll_interval_ms, retryable)
     SELECT 'id' || lpad(g::text, 6, '0'), 'o' || (g % 3), 'tools/call', 'sleep', '{}', '{}', CASE WHEN g > 4990 THEN 'working' ELSE 'completed' END,
            g, g, 60000, g + 60000, 1000, false
     FROM generate_series(1, 5000) g`,
  );
  await client.query(`ANALYZE "${schema}".tasks`);
  finished = (
    await client.query<{ id: string }>(`SELECT id FROM "${schema}".tasks WHERE status = 'completed' ORDER BY id LIMIT 100`)
  ).rows.map((row) => row.id);
}, 60_000);

afterAll(async () => {
  await client?.end();
  await schemas.dropAll();
});

const ids = (n: number, from: number): string[] => finished.slice(from, from + n);
const repeat = <T>(n: number, value: T): T[] => Array.from({ length: n }, () => value);
const fresh = (n: number): string[] => Array.from({ length: n }, () => newTaskId());
const newTasks = (n: number): unknown[] => [
  fresh(n),
  repeat(n, "o1"),
  repeat(n, "tools/call"),
  repeat(n, "sleep"),
  repeat(n, "{}"),
  repeat(n, "{}"),
  repeat(n, 1),
  repeat(n, 60_000),
  repeat(n, 60_001),
  repeat(n, 1000),
  repeat(n, false),
];
const moves = (n: number, from: number): unknown[] => [
  ids(n, from),
  repeat(n, "working"),
  repeat(n, "completed"),
  repeat(n, 10_000),
  repeat(n, true),
  repeat(n, null),
  repeat(n, '{"kind":"result","value":{}}'),
  repeat(n, true),
  repeat(n, null),
  repeat(n, null),
];

/** Each batched statement with the parameters of a batch of `n` rows (`from`: where its ids start). */
const BATCHED: Array<[string, Statement, (n: number, from: number) => unknown[]]> = [
  ["a lookup of several tasks", tasks.getMany, (n, from) => [ids(n, from)]],
  ["the marks of several fetched results", sweeps.markFetchedMany, (n, from) => [ids(n, from), repeat(n, 5)]],
  ["a creation of several tasks", tasks.insertMany, (n) => newTasks(n)],
  ["a creation of several tasks that notifies", tasks.insertManyNotify, (n) => [...newTasks(n), "mcp_tasks_plans", repeat(n, null)]],
  ["status changes of several tasks", tasks.transitionMany, (n, from) => moves(n, from)],
  [
    "status changes of several tasks that notify",
    tasks.transitionManyNotify,
    (n, from) => [...moves(n, from), "mcp_tasks_plans", repeat(n, null)],
  ],
];

describe("the batched statements' plans (PostgreSQL)", () => {
  it.each(BATCHED)("%s runs one generic plan after five custom ones, whatever the batch's size", async (_what, statement, values) => {
    // Batches of 2 to 9 rows, as the coalescer sends them under load.
    for (let run = 0; run < 8; run++) await client.query({ name: statement.name, text: statement.text, values: values(2 + run, run * 10) });
    const { rows } = await client.query<{ generic_plans: string; custom_plans: string }>(
      "SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = $1",
      [statement.name],
    );
    expect(rows).toHaveLength(1);
    expect(Number(rows[0]!.custom_plans)).toBe(5);
    expect(Number(rows[0]!.generic_plans)).toBe(3);
  });

  it("a lookup of several tasks finds them by the primary key in its generic plan", async () => {
    await client.query("SET plan_cache_mode = force_generic_plan");
    try {
      await client.query(`PREPARE generic_lookup AS ${tasks.getMany.text}`);
      const plan = (await client.query<{ "QUERY PLAN": string }>("EXPLAIN EXECUTE generic_lookup(NULL)")).rows
        .map((row) => row["QUERY PLAN"])
        .join("\n");
      expect(plan).toMatch(/Index Scan using tasks_pkey/);
      expect(plan).not.toMatch(/Seq Scan/);
      const found = await client.query({ name: "forced_generic_lookup", text: tasks.getMany.text, values: [ids(3, 0)] });
      expect(found.rows.map((row: { id: string }) => row.id).sort()).toEqual(ids(3, 0));
    } finally {
      await client.query("RESET plan_cache_mode");
    }
  });
});
