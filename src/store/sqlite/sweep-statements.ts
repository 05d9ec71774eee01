/** Whole-table maintenance: TTL expiry, recovery after a crash, per-owner concurrency counts. */
import type { Database, Statement } from "better-sqlite3";
import type { ExpiredBatch } from "../task-store.js";
import { ACTIVE_SQL, QUEUED_SQL, STARTED_SQL, TERMINAL_SQL, type TaskRow } from "./rows.js";

export interface SweepStatements {
  expiredActive: Statement<[number, number], TaskRow>;
  /**
   * Deletes one batch of terminal tasks past their retention and their inputs, remembers their ids
   * (when `rememberMs` > 0) and forgets remembered ids older than `rememberMs`, atomically.
   */
  deleteExpired: (now: number, limit: number, keepFinishedMs: number, rememberMs: number) => ExpiredBatch;
  wasExpired: Statement<[string], { owner: string | null }>;
  /** Sets fetched_at once, on a terminal task; a change only the first time. */
  markFetched: Statement<[number, string], unknown>;
  activeTasks: Statement<[number], TaskRow>;
  /** Read from the kept counts: `owner_key` as store-rules' `ownerKey` encodes the owner. */
  countActive: Statement<[string], { n: number }>;
  countStored: Statement<[string], { n: number }>;
}

export function prepareSweepStatements(db: Database): SweepStatements {
  // Oldest deadline first, so a bounded batch always works on the most overdue tasks.
  // A finished task is kept until keepFinishedMs after it ended even past its expires_at; the
  // expires_at condition still narrows the walk to the tasks_expires index.
  const deleteTasks = db.prepare<
    [{ now: number; limit: number; keep: number }],
    { id: string; owner: string | null; status: string; fetched_at: number | null }
  >(`
    DELETE FROM tasks WHERE id IN (
      SELECT id FROM tasks
      WHERE status IN ${TERMINAL_SQL} AND expires_at <= @now AND updated_at <= @now - @keep
      ORDER BY expires_at, id LIMIT @limit)
    RETURNING id, owner, status, fetched_at`);
  const deleteInputs = db.prepare<[string], unknown>(`
    DELETE FROM task_inputs WHERE task_id IN (SELECT value FROM json_each(?))`);
  const remember = db.prepare<[number, string], unknown>(`
    INSERT INTO expired_tasks (id, owner, expired_at)
      SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), ? FROM json_each(?)
      WHERE true -- an INSERT … SELECT needs a WHERE before its upsert clause, or SQLite misparses it
    ON CONFLICT (id) DO NOTHING`);
  const forget = db.prepare<[number, number], unknown>(`
    DELETE FROM expired_tasks WHERE id IN (SELECT id FROM expired_tasks WHERE expired_at <= ? ORDER BY expired_at LIMIT ?)`);

  const deleteBatch = db.transaction((now: number, limit: number, keep: number, rememberMs: number): ExpiredBatch => {
    const gone = deleteTasks.all({ now, limit, keep });
    if (gone.length > 0) deleteInputs.run(JSON.stringify(gone.map((row) => row.id)));
    if (gone.length > 0 && rememberMs > 0) remember.run(now, JSON.stringify(gone.map((row) => [row.id, row.owner])));
    forget.run(now - rememberMs, limit);
    const unread = gone.filter((row) => row.status !== "cancelled" && row.fetched_at === null).length;
    return { deleted: gone.length, unread };
  });

  return {
    expiredActive: db.prepare<[number, number], TaskRow>(`
      SELECT * FROM tasks
      WHERE status IN ${ACTIVE_SQL} AND expires_at <= ?
      ORDER BY expires_at, id LIMIT ?`),

    // IMMEDIATE: take the write lock up front instead of failing to upgrade a read lock under contention.
    deleteExpired: (now, limit, keep, rememberMs) => deleteBatch.immediate(now, limit, keep, rememberMs),

    wasExpired: db.prepare<[string], { owner: string | null }>(`SELECT owner FROM expired_tasks WHERE id = ?`),

    markFetched: db.prepare<[number, string], unknown>(`
      UPDATE tasks SET fetched_at = ? WHERE id = ? AND fetched_at IS NULL AND status IN ${TERMINAL_SQL}`),

    // A live task is either queued (working, no handler yet) or started (working or
    // input_required with a handler): the two partial indexes the run queue keeps hold every one
    // of them, so no third index of live tasks has to be written with every creation and ending.
    // A parked task is in neither: tasks_waiting holds it (and only waiting tasks).
    // INDEXED BY: left to itself the planner walks tasks_created for the ORDER BY and reads every task.
    activeTasks: db.prepare<[number], TaskRow>(`
      SELECT * FROM (
        SELECT * FROM tasks INDEXED BY tasks_queued WHERE ${QUEUED_SQL}
        UNION ALL
        SELECT * FROM tasks INDEXED BY tasks_started WHERE ${STARTED_SQL}
        UNION ALL
        SELECT * FROM tasks INDEXED BY tasks_waiting WHERE wait_mode IS NOT NULL AND started_at IS NULL AND status IN ${ACTIVE_SQL}
      ) ORDER BY created_at, id LIMIT ?`),

    countActive: db.prepare<[string], { n: number }>(`
      SELECT coalesce(sum(n), 0) AS n FROM task_counts WHERE owner_key = ? AND status IN ${ACTIVE_SQL}`),

    countStored: db.prepare<[string], { n: number }>(`
      SELECT coalesce(sum(n), 0) AS n FROM task_counts WHERE owner_key = ?`),
  };
}
