/** Creating, reading, listing and moving single tasks. */
import {
  ACTIVE_SQL,
  boundLater,
  claimHeld,
  lockedInOrder,
  NEW_TASK_COLUMNS,
  stampOf,
  statement,
  TASK_COLUMNS,
  taskColumnsOf,
  timelineOf,
  type Statement,
  type Tables,
} from "./sql.js";

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
   * $5 keepMessage, $6 statusMessage, $7 outcome or null to keep, $8 terminal, $9 claim owner or
   * null, $10 claim generation). A terminal move drops the lease in the same write, and the
   * timeline entry is written by the same statement. A write naming a claim is fenced by it and
   * stamped with the database's clock (sql.ts claimHeld, stampOf). No row when the CAS failed.
   */
  transition: Statement;
  /**
   * {@link transition} of many tasks in one statement, each parameter the array of that column:
   * ($1 ids, $2 sources as comma-separated statuses, $3 to, $4 now, $5 keepMessage,
   * $6 statusMessage, $7 outcome, $8 terminal, $9 claim owners, $10 claim generations). The ids must be distinct (one UPDATE changes a row
   * once); the tasks whose CAS held come back.
   */
  transitionMany: Statement;
  /**
   * ($1 id, $2 now, $3 keepMessage, $4 statusMessage, $5 progress or null to keep, $6 claim owner
   * or null, $7 claim generation, $8 timeline); only non-terminal tasks, fenced like {@link transition}.
   * Returns `n` = 1 when it wrote.
   */
  annotate: Statement;
  /**
   * {@link insert}, {@link insertMany}, {@link transition} and {@link transitionMany} that also
   * send a NOTIFY per row written, from the same statement (delivered on commit; none for a row
   * not written): the parameters of their plain form, then the channel and the payload — for the
   * array forms an array of payloads in the order of the ids, a NULL payload sending nothing.
   */
  insertNotify: Statement;
  insertManyNotify: Statement;
  transitionNotify: Statement;
  transitionManyNotify: Statement;
}

/**
 * The end of a statement whose CTE `source` holds the rows written: one `pg_notify` per row (the
 * payload `payload`, an SQL expression over `source`), then those rows. A CTE that nothing reads
 * is not run, hence the count the rows are joined with.
 */
function notifying(source: string, channel: string, payload: string): string {
  return `notified AS (
         SELECT pg_notify(${channel}::text, p.payload) FROM ${source} CROSS JOIN LATERAL (SELECT ${payload} AS payload) AS p
         WHERE p.payload IS NOT NULL)
       SELECT ${source}.* FROM ${source} CROSS JOIN (SELECT count(*) FROM notified) AS sent`;
}

/** The array parameters $1, $2, … of a batch's `unnest`, each {@link boundLater}. */
function arrays(types: readonly string[]): string {
  return types.map((type, i) => boundLater(`$${i + 1}`, type)).join(", ");
}

/**
 * `insert` / `transition` and their `…Many` array forms say the same thing twice on purpose: a
 * batch of one goes through the single-row form, which is measurably cheaper (postgres-store.ts).
 */
export function taskStatements(t: Tables): TaskStatements {
  const insert = (tail: string): string => `WITH created AS (
         INSERT INTO ${t.tasks} (${NEW_TASK_COLUMNS})
         VALUES ($1, $2, $3, $4, $5, $6, 'working', NULL, $7, $7, $8, $9, $10, $11)
         ON CONFLICT (id) DO NOTHING
         RETURNING ${TASK_COLUMNS}),
       ${timelineOf(t, "created", "created_at")}${tail}`;
  const insertMany = (tail: string): string => `WITH created AS (
         INSERT INTO ${t.tasks} (${NEW_TASK_COLUMNS})
         SELECT id, owner, method, name, request, origin, 'working', NULL,
                created_at, created_at, ttl_ms, expires_at, poll_interval_ms, retryable
         FROM unnest(${arrays(["text[]", "text[]", "text[]", "text[]", "text[]", "text[]", "int8[]", "int8[]", "int8[]", "int8[]", "bool[]"])})
              AS new(id, owner, method, name, request, origin, created_at, ttl_ms, expires_at, poll_interval_ms, retryable)
         ON CONFLICT (id) DO NOTHING
         RETURNING ${TASK_COLUMNS}),
       ${timelineOf(t, "created", "created_at")}${tail}`;
  const transition = (tail: string): string => `WITH moved AS (
         UPDATE ${t.tasks} SET
           status = $3,
           updated_at = ${stampOf("$9", "$4")},
           status_message = CASE WHEN $5::boolean THEN status_message ELSE $6::text END,
           outcome = COALESCE($7::text, outcome),
           lease_owner = CASE WHEN $8::boolean THEN NULL ELSE lease_owner END,
           lease_expires_at = CASE WHEN $8::boolean THEN NULL ELSE lease_expires_at END,
           wait_mode = CASE WHEN $8::boolean THEN NULL ELSE wait_mode END
         FROM (SELECT lease_owner AS held_by FROM ${t.tasks} WHERE id = $1) AS held
         WHERE id = $1 AND status = ANY ($2::text[]) AND ${claimHeld("$9", "$10")}
         RETURNING ${TASK_COLUMNS}, COALESCE($9::text, held.held_by) AS node),
       ${timelineOf(t, "moved", "updated_at", "node")}${tail}`;
  const transitionMany = (tail: string): string => `WITH change AS (
         SELECT * FROM unnest(${arrays(["text[]", "text[]", "text[]", "int8[]", "bool[]", "text[]", "text[]", "bool[]", "text[]", "int8[]"])})
                AS c(id, sources, status, at, keep_message, status_message, outcome, terminal, claim_owner, claim_generation)),
       ${lockedInOrder(t, "id IN (SELECT id FROM change)", "lease_owner")},
       moved AS (
         UPDATE ${t.tasks} AS t SET
           status = c.status,
           updated_at = ${stampOf("c.claim_owner", "c.at", "t")},
           status_message = CASE WHEN c.keep_message THEN t.status_message ELSE c.status_message END,
           outcome = COALESCE(c.outcome, t.outcome),
           lease_owner = CASE WHEN c.terminal THEN NULL ELSE t.lease_owner END,
           lease_expires_at = CASE WHEN c.terminal THEN NULL ELSE t.lease_expires_at END,
           wait_mode = CASE WHEN c.terminal THEN NULL ELSE t.wait_mode END
         FROM change AS c JOIN locked AS l ON l.id = c.id
         WHERE t.id = c.id AND t.status = ANY (string_to_array(c.sources, ',')) AND ${claimHeld("c.claim_owner", "c.claim_generation", "t")}
         RETURNING ${taskColumnsOf("t")}, COALESCE(c.claim_owner, l.lease_owner) AS node),
       ${timelineOf(t, "moved", "updated_at", "node")}${tail}`;
  const plain = `
       SELECT * FROM`;
  return {
    insert: statement("insert_task", insert(`${plain} created`)),
    insertMany: statement("insert_tasks", insertMany(`${plain} created`)),
    transition: statement("transition", transition(`${plain} moved`)),
    transitionMany: statement("transition_many", transitionMany(`${plain} moved`)),
    insertNotify: statement("insert_task_notify", insert(`,\n       ${notifying("created", "$12", "$13::text")}`)),
    // Within a batch an id may repeat (only its first occurrence is written): the first payload goes.
    insertManyNotify: statement(
      "insert_tasks_notify",
      insertMany(`,\n       ${notifying("created", "$12", "($13::text[])[array_position($1::text[], created.id::text)]")}`),
    ),
    transitionNotify: statement("transition_notify", transition(`,\n       ${notifying("moved", "$11", "$12::text")}`)),
    transitionManyNotify: statement(
      "transition_many_notify",
      transitionMany(`,\n       ${notifying("moved", "$11", "($12::text[])[array_position($1::text[], moved.id::text)]")}`),
    ),

    get: statement("get_task", `SELECT ${TASK_COLUMNS} FROM ${t.tasks} WHERE id = $1`),

    getMany: statement("get_tasks", `SELECT ${TASK_COLUMNS} FROM ${t.tasks} WHERE id = ANY(${boundLater("$1", "text[]")}::text[])`),

    // `owner = $1` and `owner IS NULL` rather than IS NOT DISTINCT FROM, which no index can serve.
    listFirst: statement("list_first", `SELECT ${TASK_COLUMNS} FROM ${t.tasks} WHERE owner = $1 ORDER BY created_at, id LIMIT $2`),
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

    // $8: also a timeline entry (the status unchanged, the message as it now reads), in this statement.
    annotate: statement(
      "annotate",
      `WITH annotated AS (
         UPDATE ${t.tasks} SET
           updated_at = ${stampOf("$6", "$2")},
           status_message = CASE WHEN $3::boolean THEN status_message ELSE $4::text END,
           progress = COALESCE($5::text, progress)
         WHERE id = $1 AND status IN ${ACTIVE_SQL} AND ${claimHeld("$6", "$7")}
         RETURNING id, status, status_message, updated_at),
       marked AS (SELECT * FROM annotated WHERE $8::boolean),
       ${timelineOf(t, "marked", "updated_at", "$6::text")}
       SELECT count(*)::int AS n FROM annotated`,
    ),
  };
}
