/** Checkpointed step results of durable execution (see ../checkpoint-store.ts). */
import type { SqliteDatabase as Database, Statement } from "./driver.js";
import type { CheckpointRow } from "../sql/rows.js";

export interface SaveParams {
  taskId: string;
  name: string;
  value: string;
  createdAt: number;
}

export interface CheckpointStatements {
  /** First write wins: 0 changes when kept already or the task is unknown. */
  save: Statement<[SaveParams], unknown>;
  /** (taskId): oldest first. */
  all: Statement<[string], CheckpointRow>;
  /** (taskId) */
  drop: Statement<[string], unknown>;
}

export function prepareCheckpointStatements(db: Database): CheckpointStatements {
  return {
    // The WHERE on the SELECT also keeps SQLite from parsing ON CONFLICT as part of a join.
    save: db.prepare<[SaveParams], unknown>(`
      INSERT INTO task_checkpoints (task_id, name, value, created_at)
      SELECT @taskId, @name, @value, @createdAt WHERE EXISTS (SELECT 1 FROM tasks WHERE id = @taskId)
      ON CONFLICT (task_id, name) DO NOTHING`),

    // rowid breaks ties between steps that ended in the same millisecond: insertion order.
    all: db.prepare<[string], CheckpointRow>(`
      SELECT name, value, created_at FROM task_checkpoints WHERE task_id = ? ORDER BY created_at, rowid`),

    drop: db.prepare<[string], unknown>(`DELETE FROM task_checkpoints WHERE task_id = ?`),
  };
}
