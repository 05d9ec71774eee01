/**
 * The PostgreSQL store keeps the planner's statistics of its tasks table where autovacuum does
 * not (off, or not yet past its first pass), so that claims find the running tasks through their
 * partial index instead of scanning every task.
 */
import { afterAll, describe, expect, it } from "vitest";
import { leaseStatements } from "../../src/store/postgres/lease-statements.js";
import { postgresStore } from "../../src/store/postgres/postgres-store.js";
import { tablesOf } from "../../src/store/postgres/sql.js";
import { needsAnalyze } from "../../src/store/postgres/statistics-upkeep.js";
import { freshSchemas, pgQuery, TEST_PG_URL } from "../support/postgres.js";

const schemas = freshSchemas("mcp_tasks_stats");
afterAll(() => schemas.dropAll());

/** The claim's plan (tasks already claimed: 50 of 5,000, the rest finished). */
async function claimPlan(schema: string): Promise<string> {
  const claim = leaseStatements(tablesOf(schema)).claim;
  const { rows } = await pgQuery(`EXPLAIN ${claim.text}`, ["w2", 8, 1, 30_000, "{}", null]);
  return rows.map((row: { "QUERY PLAN": string }) => row["QUERY PLAN"]).join("\n");
}

describe("the tasks table's statistics (PostgreSQL)", () => {
  it("are analyzed by a worker's heartbeat once the table changed enough, and the claim then finds the running tasks by their index", async () => {
    const schema = schemas.next();
    const store = postgresStore(TEST_PG_URL, { schema, poolSize: 2 });
    try {
      await store.migrate();
      const t = `"${schema}".tasks`;
      // Written on a connection that then closes, so its changes are in the statistics counters.
      await pgQuery(
        `INSERT INTO ${t} (id, owner, method, name, request, origin, status, created_at, updated_at, ttl_ms, expires_at, poll_interval_ms, retryable, lease_owner, lease_expires_at)
         SELECT 'id' || g, NULL, 'tools/call', 'sleep', '{}', '{}', CASE WHEN g > 4950 THEN 'working' ELSE 'completed' END, g, g, 60000, g + 60000, 1000, false,
                CASE WHEN g > 4950 THEN 'w1' END, CASE WHEN g > 4950 THEN 99999999 END
         FROM generate_series(1, 5000) g`,
      );
      expect(await claimPlan(schema)).toMatch(/Seq Scan on tasks/);
      const reltuples = async (): Promise<number> =>
        Number((await pgQuery(`SELECT reltuples FROM pg_class WHERE oid = to_regclass($1)`, [`${schema}.tasks`])).rows[0].reltuples);
      // The server's statistics counters arrive within a second of the writer's commit.
      for (let tries = 0; (await reltuples()) <= 0 && tries < 3; tries++) {
        await store.heartbeat({ workerId: "w1", startedAt: 1, concurrency: 4, leaseMs: 30_000 }, Date.now());
        if ((await reltuples()) <= 0) await new Promise((resolve) => setTimeout(resolve, 5_100));
      }
      expect(await reltuples()).toBeGreaterThan(4000);
      const plan = await claimPlan(schema);
      expect(plan).toMatch(/tasks_leases/);
      expect(plan).not.toMatch(/Seq Scan on tasks/);
    } finally {
      await store.close();
    }
  }, 60_000);

  it("are left to autovacuum once it has analyzed the table, and analyzed by the store while it is off", () => {
    const changed = { live: 10_000, changed: 2_000 };
    expect(needsAnalyze({ ...changed, analyzed: true, autovacuum: true })).toBe(false);
    expect(needsAnalyze({ ...changed, analyzed: false, autovacuum: true })).toBe(true);
    expect(needsAnalyze({ ...changed, analyzed: true, autovacuum: false })).toBe(true);
  });

  it("are not analyzed again before a tenth of the table (and 500 rows) changed", () => {
    expect(needsAnalyze({ live: 10_000, changed: 1_400, analyzed: true, autovacuum: false })).toBe(false);
    expect(needsAnalyze({ live: 10_000, changed: 1_500, analyzed: true, autovacuum: false })).toBe(true);
    expect(needsAnalyze({ live: 0, changed: 499, analyzed: false, autovacuum: false })).toBe(false);
  });
});
