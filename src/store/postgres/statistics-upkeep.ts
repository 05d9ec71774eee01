/**
 * Keeps the planner's statistics of the tasks table current where nothing else does. The claim
 * (lease-statements.ts) finds the running tasks through a partial index that only pays off when
 * the planner knows almost no task holds a lease; on a table it has never analyzed it assumes
 * otherwise and scans every task — and every dead version of one — on each claim. Autovacuum
 * analyzes a table about a minute after it changed enough; until its first pass (a new
 * deployment under load), or with autovacuum off, nobody does, and bench:cluster measured claims
 * costing twice the PostgreSQL CPU per task, more with each minute.
 */
import type pg from "pg";
import type { Logger } from "../../core/logger.js";
import type { Tables } from "./sql.js";

/** Least time between two looks at the table's statistics, per store. */
const LOOK_EVERY_MS = 5_000;

interface TableState {
  live: number;
  changed: number;
  analyzed: boolean;
  autovacuum: boolean;
}

/** Whether a table in this state needs an ANALYZE from us: changed enough since the last one, and no autovacuum pass to count on. */
export function needsAnalyze(state: TableState): boolean {
  const changedEnough = state.changed >= 500 + 0.1 * state.live;
  return changedEnough && (!state.autovacuum || !state.analyzed);
}

/**
 * Returns `look()`: at most every {@link LOOK_EVERY_MS}, reads the tasks table's counters and
 * runs ANALYZE on it when {@link needsAnalyze} says so. Never throws: the upkeep is best effort.
 * Warns once when autovacuum is off, since dead rows then stay until someone runs VACUUM.
 */
export function statisticsUpkeep(
  pool: pg.Pool,
  tables: Tables,
  logger: Pick<Logger, "info" | "warn"> | undefined,
  now: () => number = Date.now,
): () => Promise<void> {
  let lookedAt = -Infinity;
  let looking: Promise<void> | null = null;
  let warned = false;
  const look = async (): Promise<void> => {
    const { rows } = await pool.query<{ live: string; changed: string; analyzed: boolean; autovacuum: boolean }>(
      `SELECT n_live_tup::text AS live, n_mod_since_analyze::text AS changed,
              (last_analyze IS NOT NULL OR last_autoanalyze IS NOT NULL) AS analyzed,
              current_setting('autovacuum') = 'on' AS autovacuum
         FROM pg_stat_user_tables WHERE relid = to_regclass($1)`,
      [tables.tasks],
    );
    const row = rows[0];
    if (row === undefined) return;
    const state = { live: Number(row.live), changed: Number(row.changed), analyzed: row.analyzed, autovacuum: row.autovacuum };
    if (!state.autovacuum && !warned) {
      warned = true;
      logger?.warn(
        { table: tables.tasks },
        "task store: PostgreSQL's autovacuum is off; the store analyzes its tasks table itself, but dead rows stay until VACUUM runs (turn autovacuum on, or VACUUM the schema's tables regularly)",
      );
    }
    if (!needsAnalyze(state)) return;
    await pool.query(`ANALYZE ${tables.tasks}`);
    logger?.info({ table: tables.tasks, live: state.live, changed: state.changed }, "task store: analyzed the tasks table");
  };
  return () => {
    if (looking !== null || now() - lookedAt < LOOK_EVERY_MS) return looking ?? Promise.resolve();
    lookedAt = now();
    looking = look()
      .catch((err: unknown) => logger?.warn({ err }, "task store: keeping the tasks table's statistics failed; will try again"))
      .finally(() => {
        looking = null;
      });
    return looking;
  };
}
