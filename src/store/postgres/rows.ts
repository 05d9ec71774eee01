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
