/** Whole-table maintenance: TTL expiry, recovery after a crash, per-owner concurrency counts. */
import type { Database, Statement } from "better-sqlite3";
import { ACTIVE_SQL, TERMINAL_SQL, type TaskRow } from "./rows.js";

export interface SweepStatements {
  expiredActive: Statement<[number, number], TaskRow>;
  /** Deletes one batch of expired terminal tasks and their inputs, atomically; returns how many tasks. */
  deleteExpired: (now: number, limit: number) => number;
  activeTasks: Statement<[number], TaskRow>;
  countActive: Statement<[string | null], { n: number }>;
  countStored: Statement<[string | null], { n: number }>;
}

export function prepareSweepStatements(db: Database): SweepStatements {
  // Oldest deadline first, so a bounded batch always works on the most overdue tasks.
  const deleteTasks = db.prepare<[number, number], { id: string }>(`
    DELETE FROM tasks WHERE id IN (
      SELECT id FROM tasks
      WHERE status IN ${TERMINAL_SQL} AND expires_at <= ?
      ORDER BY expires_at, id LIMIT ?)
    RETURNING id`);
  const deleteInputs = db.prepare<[string], unknown>(`
    DELETE FROM task_inputs WHERE task_id IN (SELECT value FROM json_each(?))`);

  const deleteBatch = db.transaction((now: number, limit: number): number => {
    const ids = deleteTasks.all(now, limit).map((row) => row.id);
    if (ids.length > 0) deleteInputs.run(JSON.stringify(ids));
    return ids.length;
  });

  return {
    expiredActive: db.prepare<[number, number], TaskRow>(`
      SELECT * FROM tasks
      WHERE status IN ${ACTIVE_SQL} AND expires_at <= ?
      ORDER BY expires_at, id LIMIT ?`),

    // IMMEDIATE: take the write lock up front instead of failing to upgrade a read lock under contention.
    deleteExpired: (now, limit) => deleteBatch.immediate(now, limit),

    // INDEXED BY: left to itself the planner walks tasks_created for the ORDER BY and reads every
    // task; the few live ones are all in the partial index.
    activeTasks: db.prepare<[number], TaskRow>(`
      SELECT * FROM tasks INDEXED BY tasks_active WHERE status IN ${ACTIVE_SQL}
      ORDER BY created_at, id LIMIT ?`),

    countActive: db.prepare<[string | null], { n: number }>(`
      SELECT count(*) AS n FROM tasks WHERE owner IS ? AND status IN ${ACTIVE_SQL}`),

    // Counted on tasks_owner_created alone (it covers the query): no table row is read.
    countStored: db.prepare<[string | null], { n: number }>(`
      SELECT count(*) AS n FROM tasks WHERE owner IS ?`),
  };
}
