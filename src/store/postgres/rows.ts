/**
 * Row shapes of the PostgreSQL tables and their mapping to the protocol-neutral records of `core`.
 * BIGINT columns arrive as numbers (the store's connections parse int8 so; every value is a
 * millisecond time, duration or count, far below 2^53). JSON columns are TEXT this store wrote
 * itself, so parsing trusts their shape.
 */
import type { TaskRow as SqlTaskRow } from "../sql/rows.js";

export { inputFromRow, statusChangeFromRow, taskFromRow, toJson, type HistoryRow, type InputRow } from "../sql/rows.js";

/** BOOLEAN `retryable`. */
export type TaskRow = SqlTaskRow<boolean>;

/** A task with the lease that was found expired on it. */
export interface LeasedTaskRow extends TaskRow {
  lease_owner: string;
  attempts: number;
}

/** A task found with an expired lease: when it ran out, too. */
export interface ExpiredLeaseRow extends LeasedTaskRow {
  lease_expires_at: number;
}

/** A task as a claim returned it, with the claim. */
export interface ClaimedTaskRow extends LeasedTaskRow {
  claim_generation: number;
}

/** A worker's row, with the number of leases it holds (`count(*)`, parsed as a number like every int8). */
export interface WorkerRow {
  worker_id: string;
  started_at: number;
  heartbeat_at: number;
  concurrency: number;
  lease_ms: number;
  running: number;
}

/** A lease held on a task. */
export interface HeldLeaseRow {
  id: string;
  name: string;
  status: string;
  lease_owner: string;
  leased_at: number | null;
  lease_expires_at: number;
  attempts: number;
}
