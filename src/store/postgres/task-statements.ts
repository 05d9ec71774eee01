/** Creating, reading, listing and moving single tasks. */
import { ACTIVE_SQL, NEW_TASK_COLUMNS, statement, TASK_COLUMNS, taskColumnsOf, timelineOf, type Statement, type Tables } from "./sql.js";

export interface TaskStatements {
  /**
   * ($1 id, $2 owner, $3 method, $4 name, $5 request, $6 origin, $7 createdAt, $8 ttlMs,
   * $9 expiresAt, $10 pollIntervalMs, $11 retryable). No row when the id is taken (nothing
   * written); otherwise the task, with its first timeline entry written by the same statement.
   */
  insert: Statement;
  /**
   * {@link insert} of many tasks in one statement: each parameter is the array of that column
   * ($1 ids, … $11 retryables). The tasks whose id was free come back; a taken id writes nothing.
   */
  insertMany: Statement;
  /** ($1 id) */
  get: Statement;
  /** ($1 ids): the tasks among them that exist, whoever owns them (the caller filters). */
  getMany: Statement;
  /** ($1 owner, $2 limit) — and the `Anonymous` variants with no owner parameter. */
  listFirst: Statement;
  listFirstAnonymous: Statement;
  /** ($1 owner, $2 createdAt, $3 id, $4 limit) */
  listAfter: Statement;
  listAfterAnonymous: Statement;
  /**
   * The compare-and-set every status change goes through: ($1 id, $2 from[], $3 to, $4 now,
   * $5 keepMessage, $6 statusMessage, $7 outcome or null to keep, $8 terminal). A terminal move
   * drops the lease in the same write, and the timeline entry is written by the same statement.
   * No row when the CAS failed.
   */
  transition: Statement;
  /**
   * {@link transition} of many tasks in one statement, each parameter the array of that column:
   * ($1 ids, $2 sources as comma-separated statuses, $3 to, $4 now, $5 keepMessage,
   * $6 statusMessage, $7 outcome, $8 terminal). The ids must be distinct (one UPDATE changes a row
   * once); the tasks whose CAS held come back.
   */
  transitionMany: Statement;
  /** ($1 id, $2 now, $3 keepMessage, $4 statusMessage, $5 progress or null to keep); only non-terminal tasks. */
  annotate: Statement;
}

/**
 * `insert` / `transition` and their `…Many` array forms say the same thing twice on purpose: a
 * batch of one goes through the single-row form, which is measurably cheaper (postgres-store.ts).
 */
export function taskStatements(t: Tables): TaskStatements {
  return {
    insert: statement(
      "insert_task",
      `WITH created AS (
         INSERT INTO ${t.tasks} (${NEW_TASK_COLUMNS})
         VALUES ($1, $2, $3, $4, $5, $6, 'working', NULL, $7, $7, $8, $9, $10, $11)
         ON CONFLICT (id) DO NOTHING
         RETURNING ${TASK_COLUMNS}),
       ${timelineOf(t, "created", "created_at")}
       SELECT * FROM created`,
    ),

    insertMany: statement(
      "insert_tasks",
      `WITH created AS (
         INSERT INTO ${t.tasks} (${NEW_TASK_COLUMNS})
         SELECT id, owner, method, name, request, origin, 'working', NULL,
                created_at, created_at, ttl_ms, expires_at, poll_interval_ms, retryable
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                     $7::int8[], $8::int8[], $9::int8[], $10::int8[], $11::bool[])
              AS new(id, owner, method, name, request, origin, created_at, ttl_ms, expires_at, poll_interval_ms, retryable)
         ON CONFLICT (id) DO NOTHING
         RETURNING ${TASK_COLUMNS}),
       ${timelineOf(t, "created", "created_at")}
       SELECT * FROM created`,
    ),

    get: statement("get_task", `SELECT ${TASK_COLUMNS} FROM ${t.tasks} WHERE id = $1`),

    getMany: statement("get_tasks", `SELECT ${TASK_COLUMNS} FROM ${t.tasks} WHERE id = ANY($1::text[])`),

    // `owner = $1` and `owner IS NULL` rather than IS NOT DISTINCT FROM, which no index can serve.
    listFirst: statement(
      "list_first",
      `SELECT ${TASK_COLUMNS} FROM ${t.tasks} WHERE owner = $1 ORDER BY created_at, id LIMIT $2`,
    ),
    listFirstAnonymous: statement(
      "list_first_anonymous",
      `SELECT ${TASK_COLUMNS} FROM ${t.tasks} WHERE owner IS NULL ORDER BY created_at, id LIMIT $1`,
    ),
    listAfter: statement(
      "list_after",
      `SELECT ${TASK_COLUMNS} FROM ${t.tasks}
       WHERE owner = $1 AND (created_at, id) > ($2, $3)
       ORDER BY created_at, id LIMIT $4`,
    ),
    listAfterAnonymous: statement(
      "list_after_anonymous",
      `SELECT ${TASK_COLUMNS} FROM ${t.tasks}
       WHERE owner IS NULL AND (created_at, id) > ($1, $2)
       ORDER BY created_at, id LIMIT $3`,
    ),

    transition: statement(
      "transition",
      `WITH moved AS (
         UPDATE ${t.tasks} SET
           status = $3,
           updated_at = $4,
           status_message = CASE WHEN $5::boolean THEN status_message ELSE $6::text END,
           outcome = COALESCE($7::text, outcome),
           lease_owner = CASE WHEN $8::boolean THEN NULL ELSE lease_owner END,
           lease_expires_at = CASE WHEN $8::boolean THEN NULL ELSE lease_expires_at END
         WHERE id = $1 AND status = ANY ($2::text[])
         RETURNING ${TASK_COLUMNS}),
       ${timelineOf(t, "moved", "updated_at")}
       SELECT * FROM moved`,
    ),

    transitionMany: statement(
      "transition_many",
      `WITH change AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int8[], $5::bool[], $6::text[], $7::text[], $8::bool[])
                AS c(id, sources, status, at, keep_message, status_message, outcome, terminal)),
       moved AS (
         UPDATE ${t.tasks} AS t SET
           status = c.status,
           updated_at = c.at,
           status_message = CASE WHEN c.keep_message THEN t.status_message ELSE c.status_message END,
           outcome = COALESCE(c.outcome, t.outcome),
           lease_owner = CASE WHEN c.terminal THEN NULL ELSE t.lease_owner END,
           lease_expires_at = CASE WHEN c.terminal THEN NULL ELSE t.lease_expires_at END
         FROM change AS c
         WHERE t.id = c.id AND t.status = ANY (string_to_array(c.sources, ','))
         RETURNING ${taskColumnsOf("t")}),
       ${timelineOf(t, "moved", "updated_at")}
       SELECT * FROM moved`,
    ),

    annotate: statement(
      "annotate",
      `UPDATE ${t.tasks} SET
         updated_at = $2,
         status_message = CASE WHEN $3::boolean THEN status_message ELSE $4::text END,
         progress = COALESCE($5::text, progress)
       WHERE id = $1 AND status IN ${ACTIVE_SQL}`,
    ),
  };
}
