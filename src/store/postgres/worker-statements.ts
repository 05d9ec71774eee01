/**
 * The operator's view of a cluster (cluster-view.ts): workers' heartbeats, the workers alive, the
 * leases held. Alive means a heartbeat younger than the worker's own lease duration — the same
 * deadline its leases have — so the view and the reaper agree on who is gone.
 */
import { statement, type Statement, type Tables } from "./sql.js";

export interface WorkerStatements {
  /**
   * ($1 workerId, $2 startedAt, $3 now, $4 concurrency, $5 leaseMs, $6 forgetBefore): inserts or
   * refreshes the worker's row (its first startedAt kept, the heartbeat never moved back) and drops
   * the rows of workers whose lease ran out before $6. Returns the ids of the workers alive at $3,
   * this one included, in the order of `alive` (the worker pool's wake order), so the beat
   * answers it without a statement of its own.
   */
  heartbeat: Statement;
  /** ($1 workerId) */
  retire: Statement;
  /** ($1 now): workers alive at $1, oldest first, with the number of leases each holds. */
  alive: Statement;
  /** ($1 limit): leases held, soonest expiry first (the reaper's index, tasks_leases). */
  leases: Statement;
}

export function workerStatements(t: Tables): WorkerStatements {
  return {
    heartbeat: statement(
      "heartbeat",
      `WITH forgotten AS (
         DELETE FROM ${t.workers} WHERE heartbeat_at + lease_ms < $6::bigint AND worker_id <> $1),
       beat AS (
         INSERT INTO ${t.workers} (worker_id, started_at, heartbeat_at, concurrency, lease_ms)
         VALUES ($1, $2::bigint, $3::bigint, $4::int, $5::bigint)
         ON CONFLICT (worker_id) DO UPDATE SET
           heartbeat_at = GREATEST(${t.workers}.heartbeat_at, EXCLUDED.heartbeat_at),
           concurrency = EXCLUDED.concurrency,
           lease_ms = EXCLUDED.lease_ms
         RETURNING worker_id, started_at)
       SELECT worker_id FROM (
         SELECT worker_id, started_at FROM beat
         UNION ALL
         SELECT worker_id, started_at FROM ${t.workers} WHERE heartbeat_at + lease_ms > $3::bigint AND worker_id <> $1) AS alive
       ORDER BY started_at, worker_id`,
    ),

    retire: statement("retire", `DELETE FROM ${t.workers} WHERE worker_id = $1`),

    alive: statement(
      "alive_workers",
      `SELECT w.worker_id, w.started_at, w.heartbeat_at, w.concurrency, w.lease_ms,
              (SELECT count(*) FROM ${t.tasks} AS t WHERE t.lease_owner = w.worker_id) AS running
       FROM ${t.workers} AS w
       WHERE w.heartbeat_at + w.lease_ms > $1::bigint
       ORDER BY w.started_at, w.worker_id`,
    ),

    leases: statement(
      "held_leases",
      `SELECT id, name, status, lease_owner, leased_at, lease_expires_at, attempts FROM ${t.tasks}
       WHERE lease_owner IS NOT NULL
       ORDER BY lease_expires_at, id LIMIT $1`,
    ),
  };
}
