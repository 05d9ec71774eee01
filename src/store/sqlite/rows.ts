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
 * Status sets inlined as literals rather than bound: SQLite only uses the partial `tasks_active`
 * index when the query's WHERE visibly implies the index's WHERE.
 */
export const ACTIVE_SQL = sqlList(ACTIVE_STATUSES);
export const TERMINAL_SQL = sqlList(TERMINAL_STATUSES);
