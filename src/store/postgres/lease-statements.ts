/**
 * Work distribution for a cluster: claiming queued tasks, renewing, reaping and releasing leases.
 * Every statement is a compare-and-set on (lease_owner, lease_expires_at), so two workers never
 * hold one task and a reaper never takes a task whose worker renewed in time.
 */
import { ACTIVE_SQL, statement, TASK_COLUMNS, taskColumnsOf, timelineOf, type Statement, type Tables } from "./sql.js";

export interface LeaseStatements {
  /**
   * ($1 workerId, $2 limit, $3 now, $4 leaseMs): leases the oldest unclaimed `working` tasks,
   * skipping rows another claimer has locked, and counts the run in `attempts`. `claimNamed` adds
   * ($5 names[]).
   */
  claim: Statement;
  claimNamed: Statement;
  /** ($1 workerId, $2 taskIds[], $3 now, $4 leaseMs): extends leases still held and not yet expired; returns their ids. */
  renew: Statement;
  /**
   * ($1 now, $2 limit): tasks whose lease ran out, soonest deadline first, with lease_owner and
   * attempts. Only non-terminal tasks hold leases (a CHECK constraint), so no status filter: the
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
}

function claimText(t: Tables, names: boolean): string {
  // The CTE is materialised (it locks rows), so the LIMIT holds however the UPDATE is planned.
  return `WITH next AS (
      SELECT id FROM ${t.tasks}
      WHERE status = 'working' AND lease_owner IS NULL${names ? " AND name = ANY ($5::text[])" : ""}
      ORDER BY created_at, id
      LIMIT $2
      FOR UPDATE SKIP LOCKED)
    UPDATE ${t.tasks} AS t SET
      lease_owner = $1,
      lease_expires_at = $3::bigint + $4::bigint,
      leased_at = $3::bigint,
      attempts = t.attempts + 1
    FROM next WHERE t.id = next.id
    RETURNING ${taskColumnsOf("t")}, t.attempts`;
}

export function leaseStatements(t: Tables): LeaseStatements {
  return {
    claim: statement("claim", claimText(t, false)),
    claimNamed: statement("claim_named", claimText(t, true)),

    renew: statement(
      "renew",
      `UPDATE ${t.tasks} SET lease_expires_at = $3::bigint + $4::bigint
       WHERE id = ANY ($2::text[]) AND lease_owner = $1 AND lease_expires_at > $3::bigint
       RETURNING id`,
    ),

    expiredLeases: statement(
      "expired_leases",
      `SELECT ${TASK_COLUMNS}, lease_owner, attempts FROM ${t.tasks}
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
           lease_expires_at = NULL
         WHERE id = $1 AND lease_owner = $2 AND lease_expires_at <= $3::bigint AND attempts < $4::int
           AND status IN ${ACTIVE_SQL}
         RETURNING id, status, status_message, updated_at),
       superseded AS (
         UPDATE ${t.inputs} SET answer = $5
         WHERE task_id IN (SELECT id FROM requeued) AND answer IS NULL AND NOT $6::boolean),
       ${timelineOf(t, "requeued", "updated_at")}
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
           lease_expires_at = NULL
         WHERE id = $1 AND lease_owner = $2 AND lease_expires_at <= $3::bigint AND status IN ${ACTIVE_SQL}
         RETURNING ${TASK_COLUMNS}),
       ${timelineOf(t, "failed", "updated_at")}
       SELECT * FROM failed`,
    ),

    release: statement(
      "release",
      `UPDATE ${t.tasks} SET lease_owner = NULL, lease_expires_at = NULL WHERE id = $1 AND lease_owner = $2`,
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
           attempts = GREATEST(attempts - 1, 0)
         WHERE id = $1 AND lease_owner = $2 AND status IN ${ACTIVE_SQL}
         RETURNING ${TASK_COLUMNS}),
       ${timelineOf(t, "handed", "updated_at")}
       SELECT * FROM handed`,
    ),

    queueDepth: statement(
      "queue_depth",
      `SELECT count(*) AS n FROM ${t.tasks} WHERE status = 'working' AND lease_owner IS NULL`,
    ),
  };
}
