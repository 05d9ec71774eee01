/** Reads for the operator's view: newest-first search with filters, per-status counts, timelines. */
import type { ListPosition } from "../../core/cursor.js";
import { countsFromTotals, ownerKey } from "../store-rules.js";
import type { TaskFilter } from "../task-store.js";
import { statement, TASK_COLUMNS, type Statement, type Tables } from "./sql.js";

/** A statement whose shape depends on the filter; values are always bound, never inlined. */
export interface DynamicQuery {
  text: string;
  values: unknown[];
}

export interface ViewStatements {
  search(filter: TaskFilter, after: ListPosition | null, limit: number): DynamicQuery;
  countByStatus(filter: TaskFilter): DynamicQuery;
  /** ($1 taskId): the timeline, oldest first. */
  history: Statement;
  /** Folds the count deltas written so far into the compacted counts; answers how many (n). */
  compactCounts: Statement;
  vacuumCountDeltas: Statement;
}

/** The WHERE clauses of a filter, its values appended to `values` (which numbers the parameters). */
function whereOf(filter: TaskFilter, values: unknown[]): string[] {
  const clauses: string[] = [];
  const bind = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  if (!("any" in filter.scope)) {
    // `= $n` or IS NULL rather than IS NOT DISTINCT FROM, which no index can serve.
    clauses.push(filter.scope.owner === null ? "owner IS NULL" : `owner = ${bind(filter.scope.owner)}`);
  }
  if (filter.statuses !== undefined) {
    clauses.push(filter.statuses.length === 0 ? "FALSE" : `status = ANY (${bind([...filter.statuses])}::text[])`);
  }
  if (filter.name !== undefined) clauses.push(`name = ${bind(filter.name)}`);
  if (filter.idPrefix !== undefined) {
    // starts_with, not LIKE: an id prefix is matched literally, whatever "%" or "_" it holds.
    clauses.push(`starts_with(id, ${bind(filter.idPrefix)})`);
  }
  if (filter.ownerName !== undefined) {
    // The key itself, or its subject (after the first "|"; strpos is 0 without one, then the whole key).
    const name = bind(filter.ownerName);
    clauses.push(`(owner = ${name} OR substr(owner, strpos(owner, '|') + 1) = ${name})`);
  }
  if (filter.createdFrom !== undefined) clauses.push(`created_at >= ${bind(filter.createdFrom)}`);
  if (filter.createdTo !== undefined) clauses.push(`created_at < ${bind(filter.createdTo)}`);
  if (filter.parked === true) clauses.push("wait_mode = 'parked'");
  return clauses;
}

const whereClause = (clauses: string[]): string => (clauses.length === 0 ? "" : `WHERE ${clauses.join(" AND ")}`);

export function viewStatements(t: Tables): ViewStatements {
  return {
    search(filter, after, limit) {
      const values: unknown[] = [];
      const clauses = whereOf(filter, values);
      if (after !== null) {
        values.push(after.createdAt, after.id);
        clauses.push(`(created_at, id) < ($${values.length - 1}, $${values.length})`);
      }
      values.push(limit);
      return {
        text: `SELECT ${TASK_COLUMNS} FROM ${t.tasks} ${whereClause(clauses)} ORDER BY created_at DESC, id DESC LIMIT $${values.length}`,
        values,
      };
    },

    countByStatus(filter) {
      if (countsFromTotals(filter)) {
        const values: unknown[] = [];
        const clauses: string[] = [];
        const bind = (value: unknown): string => {
          values.push(value);
          return `$${values.length}`;
        };
        if (!("any" in filter.scope)) clauses.push(`owner_key = ${bind(ownerKey(filter.scope.owner))}`);
        if (filter.statuses !== undefined) {
          clauses.push(filter.statuses.length === 0 ? "FALSE" : `status = ANY (${bind([...filter.statuses])}::text[])`);
        }
        if (filter.name !== undefined) clauses.push(`name = ${bind(filter.name)}`);
        const where = whereClause(clauses);
        // One statement, one snapshot: a compaction committing meanwhile is seen whole or not at all.
        return {
          text: `SELECT status, sum(n)::int8 AS n FROM (
                   SELECT status, n FROM ${t.counts} ${where}
                   UNION ALL SELECT status, delta AS n FROM ${t.countDeltas} ${where}) c
                 GROUP BY status`,
          values,
        };
      }
      const values: unknown[] = [];
      const clauses = whereOf(filter, values);
      return { text: `SELECT status, count(*) AS n FROM ${t.tasks} ${whereClause(clauses)} GROUP BY status`, values };
    },

    // seq is insertion order: it breaks ties between changes written in the same millisecond.
    history: statement("history", `SELECT status, status_message, at, node FROM ${t.history} WHERE task_id = $1 ORDER BY at, seq`),

    // Rows a concurrent compaction deleted first are skipped (READ COMMITTED re-checks them), so
    // each delta is folded in once; sorted upserts take the counter rows' locks in one order.
    compactCounts: statement(
      "compact_counts",
      // Answers how many deltas it folded (the upsert runs whether or not it is referenced).
      `WITH moved AS (DELETE FROM ${t.countDeltas} RETURNING owner_key, name, status, delta),
            summed AS (SELECT owner_key, name, status, sum(delta) AS n FROM moved GROUP BY 1, 2, 3),
            folded AS (
              INSERT INTO ${t.counts} AS c (owner_key, name, status, n)
              SELECT owner_key, name, status, n FROM summed WHERE n <> 0 ORDER BY 1, 2, 3
              ON CONFLICT (owner_key, name, status) DO UPDATE SET n = c.n + EXCLUDED.n)
       SELECT count(*)::int8 AS n FROM moved`,
    ),

    // After a large fold: reads scan the deltas' heap, dead rows included, until it is vacuumed.
    vacuumCountDeltas: statement("vacuum_count_deltas", `VACUUM ${t.countDeltas}`),
  };
}
