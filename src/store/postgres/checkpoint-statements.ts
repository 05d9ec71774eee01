/** Checkpointed step results of durable execution (see ../checkpoint-store.ts). */
import { claimHeld, DB_NOW_MS, statement, type Statement, type Tables } from "./sql.js";

export interface CheckpointStatements {
  /**
   * ($1 taskId, $2 name, $3 value, $4 createdAt). First write wins: 0 rows when kept already; a
   * foreign-key violation (23503) when the task does not exist.
   */
  save: Statement;
  /**
   * {@link save} of a worker, fenced by its claim, stamped by the database's clock: ($1 taskId,
   * $2 name, $3 value, $4 claim owner, $5 claim generation); 0 rows when the claim is no longer the task's.
   */
  saveClaimed: Statement;
  /** ($1 taskId): oldest first. */
  all: Statement;
  /** ($1 taskId) */
  drop: Statement;
}

export function checkpointStatements(t: Tables): CheckpointStatements {
  return {
    save: statement(
      "save_checkpoint",
      `INSERT INTO ${t.checkpoints} (task_id, name, value, created_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (task_id, name) DO NOTHING`,
    ),
    // Stamped by the database's clock, as a claimed question is (input-statements.ts).
    saveClaimed: statement(
      "save_checkpoint_claimed",
      `WITH held AS (
         SELECT id FROM ${t.tasks} WHERE id = $1 AND ${claimHeld("$4", "$5")} FOR SHARE)
       INSERT INTO ${t.checkpoints} (task_id, name, value, created_at)
       SELECT held.id, $2, $3, ${DB_NOW_MS} FROM held
       ON CONFLICT (task_id, name) DO NOTHING`,
    ),
    all: statement("all_checkpoints", `SELECT name, value, created_at FROM ${t.checkpoints} WHERE task_id = $1 ORDER BY created_at, seq`),
    drop: statement("drop_checkpoints", `DELETE FROM ${t.checkpoints} WHERE task_id = $1`),
  };
}
