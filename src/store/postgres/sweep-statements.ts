/** Whole-table maintenance: TTL expiry, recovery after a crash, per-owner concurrency counts. */
import { ACTIVE_SQL, statement, TASK_COLUMNS, TERMINAL_SQL, type Statement, type Tables } from "./sql.js";

export interface SweepStatements {
  /** ($1 now, $2 limit): non-terminal tasks past their deadline, most overdue first. */
  expiredActive: Statement;
  /**
   * ($1 now, $2 limit): deletes one batch of expired terminal tasks, most overdue first; their
   * inputs and timelines go with them (ON DELETE CASCADE), all in this one statement. Rows another
   * node's sweep is deleting right now are skipped rather than waited for.
   */
  deleteExpired: Statement;
  /** ($1 limit): non-terminal tasks of every owner, in creation order. */
  activeTasks: Statement;
  /** ($1 owner) — and the `Anonymous` variant with no parameter. */
  countActive: Statement;
  countActiveAnonymous: Statement;
  /** ($1 owner): tasks of the owner in any status — and the `Anonymous` variant with no parameter. */
  countStored: Statement;
  countStoredAnonymous: Statement;
}

export function sweepStatements(t: Tables): SweepStatements {
  return {
    expiredActive: statement(
      "expired_active",
      `SELECT ${TASK_COLUMNS} FROM ${t.tasks}
       WHERE status IN ${ACTIVE_SQL} AND expires_at <= $1
       ORDER BY expires_at, id LIMIT $2`,
    ),

    deleteExpired: statement(
      "delete_expired",
      `WITH doomed AS (
         SELECT id FROM ${t.tasks}
         WHERE status IN ${TERMINAL_SQL} AND expires_at <= $1
         ORDER BY expires_at, id LIMIT $2
         FOR UPDATE SKIP LOCKED)
       DELETE FROM ${t.tasks} AS t USING doomed WHERE t.id = doomed.id`,
    ),

    activeTasks: statement(
      "active_tasks",
      `SELECT ${TASK_COLUMNS} FROM ${t.tasks} WHERE status IN ${ACTIVE_SQL} ORDER BY created_at, id LIMIT $1`,
    ),

    countActive: statement(
      "count_active",
      `SELECT count(*) AS n FROM ${t.tasks} WHERE owner = $1 AND status IN ${ACTIVE_SQL}`,
    ),
    countActiveAnonymous: statement(
      "count_active_anonymous",
      `SELECT count(*) AS n FROM ${t.tasks} WHERE owner IS NULL AND status IN ${ACTIVE_SQL}`,
    ),
    // Both use tasks_owner_created (index-only when the visibility map allows).
    countStored: statement("count_stored", `SELECT count(*) AS n FROM ${t.tasks} WHERE owner = $1`),
    countStoredAnonymous: statement("count_stored_anonymous", `SELECT count(*) AS n FROM ${t.tasks} WHERE owner IS NULL`),
  };
}
