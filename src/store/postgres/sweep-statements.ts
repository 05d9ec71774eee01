/** Whole-table maintenance: TTL expiry, recovery after a crash, per-owner concurrency counts. */
import { ACTIVE_SQL, boundLater, lockedInOrder, statement, TASK_COLUMNS, TERMINAL_SQL, type Statement, type Tables } from "./sql.js";

export interface SweepStatements {
  /** ($1 now, $2 limit): non-terminal tasks past their deadline, most overdue first. */
  expiredActive: Statement;
  /**
   * ($1 now, $2 limit, $3 keepFinishedMs, $4 rememberMs): deletes one batch of terminal tasks past
   * their retention, most overdue first; their inputs and timelines go with them (ON DELETE
   * CASCADE), and their ids are remembered when $4 > 0, all in this one statement. Rows another
   * node's sweep is deleting right now are skipped rather than waited for. One row: `deleted`, `unread`.
   */
  deleteExpired: Statement;
  /** ($1 before, $2 limit): forgets remembered ids expired at or before $1. */
  forgetExpired: Statement;
  /** ($1 id): the remembered expired id's owner, if any. */
  wasExpired: Statement;
  /** ($1 now, $2 id): sets fetched_at once, on a terminal task. */
  markFetched: Statement;
  /** ($1 ids[], $2 nows[]): {@link markFetched} for many tasks in one statement; the ids it marked. */
  markFetchedMany: Statement;
  /** ($1 limit): non-terminal tasks of every owner, in creation order. */
  activeTasks: Statement;
  /** ($1 owner key, store-rules.ts `ownerKey`): the owner's non-terminal tasks, from the kept counts. */
  countActive: Statement;
  /** ($1 owner key): the owner's tasks in any status, from the kept counts. */
  countStored: Statement;
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
         WHERE status IN ${TERMINAL_SQL} AND expires_at <= $1::bigint AND updated_at <= $1::bigint - $3::bigint
         ORDER BY expires_at, id LIMIT $2
         FOR UPDATE SKIP LOCKED),
       gone AS (
         DELETE FROM ${t.tasks} AS t USING doomed WHERE t.id = doomed.id
         RETURNING t.id, t.owner, t.status, t.fetched_at),
       remembered AS (
         INSERT INTO ${t.expired} (id, owner, expired_at)
         SELECT id, owner, $1::bigint FROM gone WHERE $4::bigint > 0
         ON CONFLICT (id) DO NOTHING)
       SELECT count(*)::int AS deleted,
              (count(*) FILTER (WHERE status <> 'cancelled' AND fetched_at IS NULL))::int AS unread
       FROM gone`,
    ),

    forgetExpired: statement(
      "forget_expired",
      `DELETE FROM ${t.expired} WHERE id IN (
         SELECT id FROM ${t.expired} WHERE expired_at <= $1 ORDER BY expired_at LIMIT $2
         FOR UPDATE SKIP LOCKED)`,
    ),

    wasExpired: statement("was_expired", `SELECT owner FROM ${t.expired} WHERE id = $1`),

    markFetched: statement(
      "mark_fetched",
      `UPDATE ${t.tasks} SET fetched_at = $1 WHERE id = $2 AND fetched_at IS NULL AND status IN ${TERMINAL_SQL}`,
    ),

    markFetchedMany: statement(
      "mark_fetched_many",
      `WITH v AS (SELECT * FROM unnest(${boundLater("$1", "text[]")}, ${boundLater("$2", "int8[]")}) AS v(id, now)),
       ${lockedInOrder(t, `id IN (SELECT id FROM v) AND fetched_at IS NULL AND status IN ${TERMINAL_SQL}`)}
       UPDATE ${t.tasks} AS t SET fetched_at = v.now
         FROM v JOIN locked AS l ON l.id = v.id
        WHERE t.id = v.id AND t.fetched_at IS NULL AND t.status IN ${TERMINAL_SQL}
        RETURNING t.id`,
    ),

    activeTasks: statement(
      "active_tasks",
      `SELECT ${TASK_COLUMNS} FROM ${t.tasks} WHERE status IN ${ACTIVE_SQL} ORDER BY created_at, id LIMIT $1`,
    ),

    // From the kept counts (schema.ts: compacted rows plus the deltas not yet folded, read in one
    // snapshot), not from the tasks: counting an owner's index entries cost a visit of every
    // version of every task it holds, dead ones included until vacuum, on each cap check, and grew
    // with the table (the largest share of PostgreSQL's CPU in bench:cluster's longer phases).
    countActive: statement(
      "count_active",
      `SELECT coalesce(sum(n), 0)::int8 AS n FROM (
         SELECT n FROM ${t.counts} WHERE owner_key = $1 AND status IN ${ACTIVE_SQL}
         UNION ALL SELECT delta FROM ${t.countDeltas} WHERE owner_key = $1 AND status IN ${ACTIVE_SQL}) AS c`,
    ),
    countStored: statement(
      "count_stored",
      `SELECT coalesce(sum(n), 0)::int8 AS n FROM (
         SELECT n FROM ${t.counts} WHERE owner_key = $1
         UNION ALL SELECT delta FROM ${t.countDeltas} WHERE owner_key = $1) AS c`,
    ),
  };
}
