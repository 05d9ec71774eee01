/**
 * Work distribution for a cluster: claiming queued tasks, renewing, reaping and releasing leases.
 * Every statement is a compare-and-set on (lease_owner, lease_expires_at), so two workers never
 * hold one task and a reaper never takes a task whose worker renewed in time.
 */
import { toolPausesTable } from "./tool-pause-statements.js";
import {
  ACTIVE_SQL,
  QUEUED_SQL,
  lockedInOrder,
  statement,
  TASK_COLUMNS,
  taskColumnsOf,
  timelineOf,
  type Statement,
  type Tables,
} from "./sql.js";

export interface LeaseStatements {
  /**
   * ($1 workerId, $2 limit, $3 now, $4 leaseMs, $5 caps per name (JSON object), $6 cap per owner
   * or null): leases unclaimed `working` tasks in the fair order, skipping rows another claimer
   * has locked, counts the run in `attempts` and the claim in `claim_generation` (returned with
   * them: the fence of the run's writes). `claimNamed` adds ($7 names[]).
   */
  claim: Statement;
  claimNamed: Statement;
  /** ($1 workerId, $2 taskIds[], $3 now, $4 leaseMs): extends leases still held and not yet expired; returns their ids. */
  renew: Statement;
  /** ($1 workerId, $2 now): the tasks leased to the worker and not yet expired, with their claims. */
  heldLeases: Statement;
  /**
   * ($1 now, $2 limit): tasks whose lease ran out, soonest deadline first, with lease_owner,
   * attempts and lease_expires_at. Only non-terminal tasks hold leases (a CHECK constraint), so no status filter: the
   * query matches the partial index exactly.
   */
  expiredLeases: Statement;
  /**
   * ($1 taskId, $2 workerId, $3 now, $4 maxAttempts, $5 superseded answer, $6 keep inputs): the
   * reaper's CAS. Puts the task back in the queue, answers the lost run's pending inputs with $5
   * (unless $6: a resumed task asks them again) and appends
   * the timeline entry, all in this one statement; returns n = 1 when it won, 0 otherwise.
   */
  requeue: Statement;
  /**
   * ($1 taskId, $2 workerId, $3 now, $4 statusMessage, $5 outcome): the reaper's other CAS. Fails
   * the task and drops the lease only while the lost worker still holds the expired lease; the
   * timeline entry is written by the same statement. The failed task, or no row.
   */
  failExpired: Statement;
  /** ($1 taskId, $2 workerId) */
  release: Statement;
  /**
   * ($1 taskId, $2 workerId, $3 now, $4 statusMessage): a draining worker gives back a task it
   * still holds: queued again (`working`, unclaimed) for any worker to claim at once, the run it
   * gave up not counted in `attempts` (nothing failed), the timeline entry written by the same
   * statement. Pending inputs are left as they are, for the run that takes over. The task, or no row.
   */
  handBack: Statement;
  /** () */
  queueDepth: Statement;
  /**
   * ($1 time): whether a task of a tool not paused has waited unclaimed since `time` or longer (the oldest of the
   * queue index's entries: one index probe). `queuedSinceNamed` adds ($2 names[]).
   */
  queuedSince: Statement;
  queuedSinceNamed: Statement;
  /** ($1 taskId): queued tasks of its owner created before it; no row when it is not queued. */
  queuedAhead: Statement;
  /** ($1 owner) */
  countQueued: Statement;
  /** () */
  countQueuedAnonymous: Statement;
  /** (): queued tasks per (owner, name). */
  queueDepths: Statement;
}

function claimText(t: Tables, names: boolean): string {
  const queued = QUEUED_SQL;
  const named = names ? " AND q.name = ANY ($7::text[])" : "";
  // The fair order of QueueView (fair-order.ts writes it in plain code): rank within the owner's
  // queue plus the owner's running handlers, then oldest first; tools at their cap are left out
  // before ranking. Each owner's head comes from tasks_queue_owner (a loose index scan finds the
  // owners, a LATERAL takes at most $2 of each), so a claim reads owners × $2 queue rows, not the
  // whole queue; the running counts come from the leases (few: the workers' slots). Paused tools
  // (tool-pause-statements.ts) are left out as tools at their cap are. The last CTE
  // locks the pick (materialised, so the LIMIT holds however the UPDATE is planned).
  const heads = (ownerTest: string): string => `
      SELECT q.id, q.owner, q.name, q.created_at FROM ${t.tasks} AS q
      WHERE q.${queued} AND ${ownerTest}${named} AND q.name NOT IN (SELECT name FROM saturated)
      ORDER BY q.created_at, q.id LIMIT $2`;
  return `WITH RECURSIVE
    running AS (SELECT owner, name FROM ${t.tasks} WHERE lease_owner IS NOT NULL AND wait_mode IS NULL),
    by_owner AS (SELECT owner, count(*) AS n FROM running GROUP BY owner),
    by_name AS (SELECT name, count(*) AS n FROM running GROUP BY name),
    caps AS (SELECT key AS name, value::int AS cap FROM jsonb_each_text($5::jsonb)),
    saturated AS (
      SELECT c.name FROM caps AS c JOIN by_name AS b ON b.name = c.name WHERE b.n >= c.cap
      UNION ALL
      SELECT name FROM ${toolPausesTable(t)}),
    owners AS (
      (SELECT owner FROM ${t.tasks} WHERE ${queued} AND owner IS NOT NULL ORDER BY owner LIMIT 1)
      UNION ALL
      SELECT (SELECT q.owner FROM ${t.tasks} AS q WHERE q.${queued} AND q.owner > o.owner ORDER BY q.owner LIMIT 1)
      FROM owners AS o WHERE o.owner IS NOT NULL),
    candidates AS (
      SELECT h.* FROM owners AS o CROSS JOIN LATERAL (${heads("q.owner = o.owner")}) AS h WHERE o.owner IS NOT NULL
      UNION ALL
      (${heads("q.owner IS NULL")})),
    ranked AS (
      SELECT c.id, c.created_at, caps.cap,
             row_number() OVER (PARTITION BY c.owner ORDER BY c.created_at, c.id) + coalesce(o.n, 0) AS score,
             row_number() OVER (PARTITION BY c.name ORDER BY c.created_at, c.id) + coalesce(b.n, 0) AS load
      FROM candidates AS c
      LEFT JOIN by_owner AS o ON o.owner IS NOT DISTINCT FROM c.owner
      LEFT JOIN by_name AS b ON b.name = c.name
      LEFT JOIN caps ON caps.name = c.name),
    next AS (
      SELECT t.id FROM ranked AS r JOIN ${t.tasks} AS t ON t.id = r.id
      WHERE ($6::int IS NULL OR r.score <= $6::int) AND (r.cap IS NULL OR r.load <= r.cap)
        AND t.${queued}
      ORDER BY r.score, r.created_at, r.id
      LIMIT $2
      FOR UPDATE OF t SKIP LOCKED)
    UPDATE ${t.tasks} AS t SET
      lease_owner = $1,
      lease_expires_at = $3::bigint + $4::bigint,
      leased_at = $3::bigint,
      attempts = t.attempts + 1,
      claim_generation = t.claim_generation + 1
    FROM next WHERE t.id = next.id
    RETURNING ${taskColumnsOf("t")}, t.lease_owner, t.attempts, t.claim_generation`;
}

export function leaseStatements(t: Tables): LeaseStatements {
  return {
    claim: statement("claim", claimText(t, false)),
    claimNamed: statement("claim_named", claimText(t, true)),

    renew: statement(
      "renew",
      `WITH ${lockedInOrder(t, "id = ANY ($2::text[]) AND lease_owner = $1 AND lease_expires_at > $3::bigint")}
       UPDATE ${t.tasks} AS t SET lease_expires_at = $3::bigint + $4::bigint
       FROM locked WHERE t.id = locked.id AND t.lease_owner = $1 AND t.lease_expires_at > $3::bigint
       RETURNING t.id`,
    ),

    heldLeases: statement(
      "held_leases",
      `SELECT ${TASK_COLUMNS}, lease_owner, attempts, claim_generation FROM ${t.tasks}
       WHERE lease_owner = $1 AND lease_expires_at > $2::bigint`,
    ),

    expiredLeases: statement(
      "expired_leases",
      `SELECT ${TASK_COLUMNS}, lease_owner, attempts, lease_expires_at FROM ${t.tasks}
       WHERE lease_owner IS NOT NULL AND lease_expires_at <= $1
       ORDER BY lease_expires_at, id LIMIT $2`,
    ),

    // From input_required too: input_required → working is a legal move (T-LIFE-2). The last
    // progress belonged to the lost run, so it is cleared; the re-run reports its own.
    requeue: statement(
      "requeue",
      `WITH requeued AS (
         UPDATE ${t.tasks} SET
           status = 'working',
           updated_at = $3,
           status_message = format(
             'The worker running this task stopped renewing its lease; the task was queued to run again (attempt %s of %s)',
             attempts + 1, $4::int),
           progress = NULL,
           lease_owner = NULL,
           lease_expires_at = NULL,
           wait_mode = NULL
         WHERE id = $1 AND lease_owner = $2 AND lease_expires_at <= $3::bigint AND attempts < $4::int
           AND status IN ${ACTIVE_SQL}
         RETURNING id, status, status_message, updated_at),
       superseded AS (
         UPDATE ${t.inputs} SET answer = $5
         WHERE task_id IN (SELECT id FROM requeued) AND answer IS NULL AND NOT $6::boolean),
       ${timelineOf(t, "requeued", "updated_at", "$2::text")}
       SELECT count(*) AS n FROM requeued`,
    ),

    failExpired: statement(
      "fail_expired",
      `WITH failed AS (
         UPDATE ${t.tasks} SET
           status = 'failed',
           updated_at = $3,
           status_message = $4,
           outcome = $5,
           lease_owner = NULL,
           lease_expires_at = NULL,
           wait_mode = NULL
         WHERE id = $1 AND lease_owner = $2 AND lease_expires_at <= $3::bigint AND status IN ${ACTIVE_SQL}
         RETURNING ${TASK_COLUMNS}),
       ${timelineOf(t, "failed", "updated_at", "$2::text")}
       SELECT * FROM failed`,
    ),

    release: statement(
      "release",
      `UPDATE ${t.tasks} SET lease_owner = NULL, lease_expires_at = NULL WHERE id = $1 AND lease_owner = $2 AND claim_generation = $3::bigint`,
    ),

    handBack: statement(
      "hand_back",
      `WITH handed AS (
         UPDATE ${t.tasks} SET
           status = 'working',
           updated_at = $3,
           status_message = $4,
           lease_owner = NULL,
           lease_expires_at = NULL,
           wait_mode = NULL,
           attempts = GREATEST(attempts - 1, 0)
         WHERE id = $1 AND lease_owner = $2 AND claim_generation = $5::bigint AND status IN ${ACTIVE_SQL}
         RETURNING ${TASK_COLUMNS}),
       ${timelineOf(t, "handed", "updated_at", "$2::text")}
       SELECT * FROM handed`,
    ),

    queuedAhead: statement(
      "queued_ahead",
      `SELECT (SELECT count(*) FROM ${t.tasks} AS q
               WHERE q.status = 'working' AND q.lease_owner IS NULL AND q.wait_mode IS NULL AND q.owner IS NOT DISTINCT FROM t.owner
                 AND (q.created_at, q.id) < (t.created_at, t.id)) AS n
       FROM ${t.tasks} AS t WHERE t.id = $1 AND t.status = 'working' AND t.lease_owner IS NULL AND t.wait_mode IS NULL`,
    ),

    countQueued: statement("count_queued", `SELECT count(*) AS n FROM ${t.tasks} WHERE ${QUEUED_SQL} AND owner = $1`),

    countQueuedAnonymous: statement("count_queued_anonymous", `SELECT count(*) AS n FROM ${t.tasks} WHERE ${QUEUED_SQL} AND owner IS NULL`),

    queueDepths: statement(
      "queue_depths",
      `SELECT owner, name, count(*)::int AS n FROM ${t.tasks} WHERE ${QUEUED_SQL} GROUP BY owner, name`,
    ),

    queueDepth: statement("queue_depth", `SELECT count(*) AS n FROM ${t.tasks} WHERE ${QUEUED_SQL}`),

    queuedSince: statement(
      "queued_since",
      `SELECT EXISTS (SELECT 1 FROM ${t.tasks} WHERE ${QUEUED_SQL} AND created_at <= $1::bigint
         AND name NOT IN (SELECT name FROM ${toolPausesTable(t)})) AS waiting`,
    ),
    queuedSinceNamed: statement(
      "queued_since_named",
      `SELECT EXISTS (SELECT 1 FROM ${t.tasks} WHERE ${QUEUED_SQL} AND created_at <= $1::bigint AND name = ANY ($2::text[])
         AND name NOT IN (SELECT name FROM ${toolPausesTable(t)})) AS waiting`,
    ),
  };
}
