/** Idempotency keys (docs/idempotency.md): one per (owner, key), naming one task. */
import { NEW_TASK_COLUMNS, statement, TASK_COLUMNS, taskColumnsOf, timelineOf, type Statement, type Tables } from "./sql.js";

export interface KeyStatements {
  /**
   * The task's insert under a key, in one statement: the parameters of the task insert ($1 … $11,
   * task-statements.ts), then ($12 owner key, $13 key, $14 fingerprint). The key is claimed first
   * (`ON CONFLICT DO NOTHING`, which waits for a concurrent claim of the same key to commit or
   * roll back); the task row is written only when the claim was, so of concurrent creations under
   * one key exactly one stores a task. No row when the key was taken (nothing written).
   */
  insert: Statement;
  /** {@link insert} that also sends a NOTIFY for the row written: ($15 channel, $16 payload). */
  insertNotify: Statement;
  /** ($1 owner key, $2 key): the task the key names, with `key_fingerprint`. */
  find: Statement;
  /** ($1 owner key, $2 key, $3 task id): compare-and-delete. */
  release: Statement;
}

export function keyStatements(t: Tables): KeyStatements {
  const insert = (tail: string): string => `WITH claimed AS (
         INSERT INTO ${t.keys} (owner_key, key, task_id, fingerprint)
         VALUES ($12::text, $13::text, $1::text, $14::text)
         ON CONFLICT (owner_key, key) DO NOTHING
         RETURNING task_id),
       created AS (
         INSERT INTO ${t.tasks} (${NEW_TASK_COLUMNS})
         SELECT $1::text, $2::text, $3::text, $4::text, $5::text, $6::text, 'working', NULL,
                $7::int8, $7::int8, $8::int8, $9::int8, $10::int8, $11::bool
         FROM claimed
         ON CONFLICT (id) DO NOTHING
         RETURNING ${TASK_COLUMNS}),
       ${timelineOf(t, "created", "created_at")}${tail}`;
  return {
    insert: statement(
      "insert_keyed_task",
      insert(`
       SELECT * FROM created`),
    ),
    insertNotify: statement(
      "insert_keyed_task_notify",
      insert(`,
       notified AS (SELECT pg_notify($15::text, $16::text) FROM created)
       SELECT created.* FROM created CROSS JOIN (SELECT count(*) FROM notified) AS sent`),
    ),
    find: statement(
      "find_task_key",
      `SELECT k.fingerprint AS key_fingerprint, ${taskColumnsOf("t")}
       FROM ${t.keys} AS k JOIN ${t.tasks} AS t ON t.id = k.task_id
       WHERE k.owner_key = $1 AND k.key = $2`,
    ),
    release: statement("release_task_key", `DELETE FROM ${t.keys} WHERE owner_key = $1 AND key = $2 AND task_id = $3`),
  };
}
