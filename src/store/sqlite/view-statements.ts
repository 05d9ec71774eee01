/** Reads for the operator's view: newest-first search with filters, per-status counts, timelines. */
import type { SqliteDatabase as Database, Statement } from "./driver.js";
import type { ListPosition } from "../../core/cursor.js";
import type { TaskStatus } from "../../core/task-status.js";
import { countsFromTotals, ownerKey } from "../store-rules.js";
import type { TaskFilter } from "../task-store.js";
import type { HistoryRow, TaskRow } from "./rows.js";

type Param = string | number | null;

export interface ViewStatements {
  search(filter: TaskFilter, after: ListPosition | null, limit: number): TaskRow[];
  countByStatus(filter: TaskFilter): Array<{ status: TaskStatus; n: number }>;
  history: Statement<[string], HistoryRow>;
}

/** The WHERE clause of a filter, with its parameters in order. Values are always bound, never inlined. */
function whereOf(filter: TaskFilter): { clauses: string[]; params: Param[] } {
  const clauses: string[] = [];
  const params: Param[] = [];
  if (!("any" in filter.scope)) {
    // IS, not =: a null owner must match exactly the tasks created without one.
    clauses.push("owner IS ?");
    params.push(filter.scope.owner);
  }
  if (filter.statuses !== undefined) {
    clauses.push(filter.statuses.length === 0 ? "0" : `status IN (${filter.statuses.map(() => "?").join(", ")})`);
    params.push(...filter.statuses);
  }
  if (filter.name !== undefined) {
    clauses.push("name = ?");
    params.push(filter.name);
  }
  if (filter.idPrefix !== undefined) {
    // substr, not LIKE: an id prefix is matched literally, whatever "%" or "_" it holds.
    clauses.push("substr(id, 1, length(?)) = ?");
    params.push(filter.idPrefix, filter.idPrefix);
  }
  if (filter.ownerName !== undefined) {
    // The key itself, or its subject (after the first "|"; instr is 0 without one, then the whole key).
    clauses.push("(owner = ? OR substr(owner, instr(owner, '|') + 1) = ?)");
    params.push(filter.ownerName, filter.ownerName);
  }
  if (filter.createdFrom !== undefined) {
    clauses.push("created_at >= ?");
    params.push(filter.createdFrom);
  }
  if (filter.createdTo !== undefined) {
    clauses.push("created_at < ?");
    params.push(filter.createdTo);
  }
  if (filter.parked === true) clauses.push("wait_mode = 'parked'");
  return { clauses, params };
}

export function prepareViewStatements(db: Database): ViewStatements {
  // A filter has few shapes (which fields are set, and the number of statuses), so prepared statements are kept
  // by their SQL text instead of being re-prepared for every call.
  const cache = new Map<string, Statement<Param[], unknown>>();
  const prepared = (sql: string): Statement<Param[], unknown> => {
    let statement = cache.get(sql);
    if (statement === undefined) {
      statement = db.prepare<Param[], unknown>(sql);
      cache.set(sql, statement);
    }
    return statement;
  };

  return {
    search(filter, after, limit) {
      const { clauses, params } = whereOf(filter);
      if (after !== null) {
        clauses.push("(created_at, id) < (?, ?)");
        params.push(after.createdAt, after.id);
      }
      const where = clauses.length === 0 ? "" : `WHERE ${clauses.join(" AND ")}`;
      const sql = `SELECT * FROM tasks ${where} ORDER BY created_at DESC, id DESC LIMIT ?`;
      return prepared(sql).all(...params, limit) as TaskRow[];
    },

    countByStatus(filter) {
      if (countsFromTotals(filter)) {
        // A few rows per (owner, tool): the counts the triggers keep, not the tasks themselves.
        const clauses: string[] = [];
        const params: Param[] = [];
        if (!("any" in filter.scope)) {
          clauses.push("owner_key = ?");
          params.push(ownerKey(filter.scope.owner));
        }
        if (filter.statuses !== undefined) {
          clauses.push(filter.statuses.length === 0 ? "0" : `status IN (${filter.statuses.map(() => "?").join(", ")})`);
          params.push(...filter.statuses);
        }
        if (filter.name !== undefined) {
          clauses.push("name = ?");
          params.push(filter.name);
        }
        const where = clauses.length === 0 ? "" : `WHERE ${clauses.join(" AND ")}`;
        return prepared(`SELECT status, sum(n) AS n FROM task_counts ${where} GROUP BY status`).all(...params) as Array<{
          status: TaskStatus;
          n: number;
        }>;
      }
      const { clauses, params } = whereOf(filter);
      const where = clauses.length === 0 ? "" : `WHERE ${clauses.join(" AND ")}`;
      return prepared(`SELECT status, count(*) AS n FROM tasks ${where} GROUP BY status`).all(...params) as Array<{
        status: TaskStatus;
        n: number;
      }>;
    },

    // rowid is insertion order: it breaks ties between changes written in the same millisecond.
    history: db.prepare<[string], HistoryRow>(`
      SELECT status, status_message, at FROM task_history WHERE task_id = ? ORDER BY at, rowid`),
  };
}
