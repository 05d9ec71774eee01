/** The per-task queue of requests waiting for the requestor's answer (T-INPUT). */
import type { SqliteDatabase as Database, Statement } from "./driver.js";
import type { InputRow } from "./rows.js";

export interface EnqueueParams {
  taskId: string;
  id: string;
  method: string;
  params: string;
  createdAt: number;
}

export interface InputStatements {
  /** Writes nothing (0 changes) when the task is unknown or the input id is taken. */
  enqueue: Statement<[EnqueueParams], unknown>;
  taskExists: Statement<[string], { found: number }>;
  pending: Statement<[string], InputRow>;
  /** Every request of a task, answered or not, oldest first. */
  all: Statement<[string], InputRow>;
  get: Statement<[string, string], InputRow>;
  /** (answer, taskId, inputId). Answers at most once: 0 changes when already answered or unknown. */
  answer: Statement<[string, string, string], unknown>;
}

export function prepareInputStatements(db: Database): InputStatements {
  return {
    // The WHERE on the SELECT also keeps SQLite from parsing ON CONFLICT as part of a join.
    enqueue: db.prepare<[EnqueueParams], unknown>(`
      INSERT INTO task_inputs (task_id, id, method, params, created_at, answer)
      SELECT @taskId, @id, @method, @params, @createdAt, NULL
      WHERE EXISTS (SELECT 1 FROM tasks WHERE id = @taskId)
      ON CONFLICT (task_id, id) DO NOTHING`),

    taskExists: db.prepare<[string], { found: number }>(`SELECT 1 AS found FROM tasks WHERE id = ?`),

    // rowid breaks ties between requests queued in the same millisecond: insertion order.
    pending: db.prepare<[string], InputRow>(`
      SELECT * FROM task_inputs WHERE task_id = ? AND answer IS NULL
      ORDER BY created_at, rowid`),

    all: db.prepare<[string], InputRow>(`SELECT * FROM task_inputs WHERE task_id = ? ORDER BY created_at, rowid`),

    get: db.prepare<[string, string], InputRow>(`SELECT * FROM task_inputs WHERE task_id = ? AND id = ?`),

    answer: db.prepare<[string, string, string], unknown>(`
      UPDATE task_inputs SET answer = ?
      WHERE task_id = ? AND id = ? AND answer IS NULL`),
  };
}
