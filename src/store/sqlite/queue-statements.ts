/** The single node's run queue (run-queue.ts): the fair claim, and what it shows of the queue. */
import type { SqliteDatabase as Database, Statement } from "./driver.js";
import { QUEUED_SQL, RUNNING_SQL, STARTED_SQL, type TaskRow } from "./rows.js";
import { notPausedSql } from "./tool-pause-statements.js";

export interface ClaimParams {
  limit: number;
  now: number;
  /** null: no per-owner cap. */
  perOwner: number | null;
  /** JSON object name → cap. */
  caps: string;
}

export interface QueueStatements {
  /** The fair claim: marks the picked tasks started and returns them (in no particular order). */
  claim: Statement<[ClaimParams], TaskRow>;
  /**
   * The same fair claim when no tool has a cap (`caps` unused): the same picks, ranking only each
   * owner's oldest `limit` queued tasks of tools not paused, so a claim costs the same with ten or ten thousand queued.
   */
  claimUncappedByName: Statement<[ClaimParams], TaskRow>;
  /** Queued tasks of tools not paused (the ones a claim may take), counted no further than `limit + 1`. */
  queuedUpTo: Statement<[{ limit: number }], { n: number }>;
  /**
   * Marks up to `limit` queued tasks started, in no order, and returns them: the fair claim's
   * answer when every queued task fits and no cap applies (the bound holds should more be queued
   * meanwhile by another connection).
   */
  claimAll: Statement<[{ now: number; limit: number }], TaskRow>;
  started: Statement<[number], TaskRow>;
  /** No row when the task is not queued. */
  ahead: Statement<[string], { n: number }>;
  countQueued: Statement<[string | null], { n: number }>;
  depths: Statement<[], { owner: string | null; name: string; n: number }>;
}

export function prepareQueueStatements(db: Database): QueueStatements {
  return {
    // One statement, so the pick and the mark cannot be separated. The rule is the one of
    // QueueView (fair-order.ts writes it in plain code): rank within the owner's queue plus the
    // owner's running handlers, then oldest first; tools at their cap, and paused tools
    // (tool-pause-statements.ts), are left out before ranking.
    // LIMIT (SELECT @limit), not LIMIT @limit: SQLite's planner reads a bare bound LIMIT, so every
    // new binding of it (each call) recompiles the statement — most of a claim's cost, paid once
    // per created task.
    claim: db.prepare<[ClaimParams], TaskRow>(`
      WITH running AS (
        SELECT owner, name FROM tasks INDEXED BY tasks_started WHERE ${RUNNING_SQL}),
      by_owner AS (SELECT owner, count(*) AS n FROM running GROUP BY owner),
      by_name AS (SELECT name, count(*) AS n FROM running GROUP BY name),
      caps AS (SELECT key AS name, value AS cap FROM json_each(@caps)),
      ranked AS (
        SELECT q.id, q.created_at, c.cap,
               row_number() OVER (PARTITION BY q.owner ORDER BY q.created_at, q.id) + coalesce(o.n, 0) AS score,
               row_number() OVER (PARTITION BY q.name ORDER BY q.created_at, q.id) + coalesce(b.n, 0) AS load
        FROM tasks AS q INDEXED BY tasks_queued
        LEFT JOIN by_owner AS o ON o.owner IS q.owner
        LEFT JOIN by_name AS b ON b.name = q.name
        LEFT JOIN caps AS c ON c.name = q.name
        WHERE q.${QUEUED_SQL} AND ${notPausedSql("q.")} AND (c.cap IS NULL OR coalesce(b.n, 0) < c.cap)),
      picked AS (
        SELECT id FROM ranked
        WHERE (@perOwner IS NULL OR score <= @perOwner) AND (cap IS NULL OR load <= cap)
        ORDER BY score, created_at, id LIMIT (SELECT @limit))
      UPDATE tasks SET started_at = @now WHERE id IN (SELECT id FROM picked) AND ${QUEUED_SQL}
      RETURNING *`),

    // Exact: a task ranked past `limit` in its owner's queue has `limit` tasks of the same owner
    // with a lower score ahead of it (score grows with the rank), so it is never among the
    // `limit` picked, with or without the per-owner cap (which only drops the higher scores).
    claimUncappedByName: db.prepare<[ClaimParams], TaskRow>(`
      WITH RECURSIVE by_owner AS (
        SELECT owner, count(*) AS n FROM tasks INDEXED BY tasks_started WHERE ${RUNNING_SQL} GROUP BY owner),
      -- The owners with queued tasks, one index seek each (not a scan of the queue): the first,
      -- then each next one above it. Text sorts above any number, so -1 stands below every owner
      -- after a null one; a step that finds none ends the walk with a row marked not found.
      walk(owner, found) AS (
        SELECT owner, 1 FROM (SELECT owner FROM tasks INDEXED BY tasks_queued WHERE ${QUEUED_SQL} ORDER BY owner LIMIT 1)
        UNION ALL
        SELECT (SELECT n.owner FROM tasks AS n INDEXED BY tasks_queued
                WHERE n.${QUEUED_SQL} AND n.owner > coalesce(w.owner, -1) ORDER BY n.owner LIMIT 1),
               (SELECT n.owner FROM tasks AS n INDEXED BY tasks_queued
                WHERE n.${QUEUED_SQL} AND n.owner > coalesce(w.owner, -1) ORDER BY n.owner LIMIT 1) IS NOT NULL
        FROM walk AS w WHERE w.found),
      owners AS (SELECT owner FROM walk WHERE found),
      ranked AS (
        SELECT q.id, q.created_at,
               row_number() OVER (PARTITION BY q.owner ORDER BY q.created_at, q.id) + coalesce(o.n, 0) AS score
        FROM owners AS w
        JOIN tasks AS q ON q.id IN (
          SELECT f.id FROM tasks AS f INDEXED BY tasks_queued
          WHERE f.owner IS w.owner AND f.${QUEUED_SQL} AND ${notPausedSql("f.")} ORDER BY f.created_at, f.id LIMIT (SELECT @limit))
        LEFT JOIN by_owner AS o ON o.owner IS q.owner),
      picked AS (
        SELECT id FROM ranked WHERE @perOwner IS NULL OR score <= @perOwner
        ORDER BY score, created_at, id LIMIT (SELECT @limit))
      UPDATE tasks SET started_at = @now WHERE id IN (SELECT id FROM picked) AND ${QUEUED_SQL}
      RETURNING *`),

    queuedUpTo: db.prepare<[{ limit: number }], { n: number }>(`
      SELECT count(*) AS n FROM (SELECT 1 FROM tasks INDEXED BY tasks_queued WHERE ${QUEUED_SQL} AND ${notPausedSql("")} LIMIT (SELECT @limit + 1))`),

    claimAll: db.prepare<[{ now: number; limit: number }], TaskRow>(`
      UPDATE tasks SET started_at = @now
      WHERE id IN (SELECT id FROM tasks INDEXED BY tasks_queued WHERE ${QUEUED_SQL} AND ${notPausedSql("")} LIMIT (SELECT @limit)) AND ${QUEUED_SQL}
      RETURNING *`),

    started: db.prepare<[number], TaskRow>(`
      SELECT * FROM tasks INDEXED BY tasks_started WHERE ${STARTED_SQL}
      ORDER BY created_at, id LIMIT ?`),

    ahead: db.prepare<[string], { n: number }>(`
      SELECT (SELECT count(*) FROM tasks AS q INDEXED BY tasks_queued
              WHERE q.${QUEUED_SQL} AND q.owner IS t.owner
                AND (q.created_at < t.created_at OR (q.created_at = t.created_at AND q.id < t.id))) AS n
      FROM tasks AS t WHERE t.id = ? AND t.${QUEUED_SQL}`),

    countQueued: db.prepare<[string | null], { n: number }>(`
      SELECT count(*) AS n FROM tasks INDEXED BY tasks_queued WHERE ${QUEUED_SQL} AND owner IS ?`),

    depths: db.prepare<[], { owner: string | null; name: string; n: number }>(`
      SELECT owner, name, count(*) AS n FROM tasks INDEXED BY tasks_queued WHERE ${QUEUED_SQL} GROUP BY owner, name`),
  };
}
