/** SQLite's row types (see ../sql/rows.ts for the mapping shared with PostgreSQL) and SQL literals. */
import { ACTIVE_STATUSES, TERMINAL_STATUSES } from "../../core/task-status.js";
import type { TaskRow as SqlTaskRow } from "../sql/rows.js";

export { inputFromRow, statusChangeFromRow, taskFromRow, toJson, type HistoryRow, type InputRow } from "../sql/rows.js";

/** INTEGER 0/1 `retryable`. */
export type TaskRow = SqlTaskRow<number>;

function sqlList(values: readonly string[]): string {
  return `(${values.map((v) => `'${v.replaceAll("'", "''")}'`).join(", ")})`;
}

/**
 * Status sets inlined as literals rather than bound: SQLite only uses a partial index
 * (`tasks_queued`, `tasks_started`, `tasks_expires`) when the query's WHERE visibly implies the
 * index's WHERE.
 */
export const ACTIVE_SQL = sqlList(ACTIVE_STATUSES);
export const TERMINAL_SQL = sqlList(TERMINAL_STATUSES);

/** The run queue: tasks waiting for a handler (the partial index `tasks_queued`). */
export const QUEUED_SQL = "status = 'working' AND started_at IS NULL AND wait_mode IS NULL";

/**
 * Tasks whose handler has started and not ended (the partial index `tasks_started`), waiting in
 * memory or not: what recovery looks at. A parked task has no started_at.
 */
export const STARTED_SQL = `started_at IS NOT NULL AND status IN ${ACTIVE_SQL}`;

/** The handlers running now, for the caps: started tasks whose handler does not wait (wait mode "memory"). */
export const RUNNING_SQL = `${STARTED_SQL} AND wait_mode IS NULL`;
