/** Idempotency keys (docs/idempotency.md): one per (owner, key), naming one task. */
import type { SqliteDatabase as Database, Statement } from "./driver.js";
import type { TaskRow } from "./rows.js";

export interface KeyParams {
  ownerKey: string;
  key: string;
}

export interface ClaimKeyParams extends KeyParams {
  taskId: string;
  fingerprint: string;
}

export interface KeyStatements {
  /** 1 change when the key was free (now naming `taskId`), 0 when taken (nothing written). */
  claim: Statement<[ClaimKeyParams], unknown>;
  /** The task a key names, with the fingerprint the key was first used with. */
  find: Statement<[KeyParams], TaskRow & { key_fingerprint: string }>;
  /** Compare-and-delete: only while the key still names `taskId`. */
  release: Statement<[KeyParams & { taskId: string }], unknown>;
}

export function prepareKeyStatements(db: Database): KeyStatements {
  return {
    claim: db.prepare<[ClaimKeyParams], unknown>(`
      INSERT INTO task_keys (owner_key, key, task_id, fingerprint)
      VALUES (@ownerKey, @key, @taskId, @fingerprint)
      ON CONFLICT (owner_key, key) DO NOTHING`),

    find: db.prepare<[KeyParams], TaskRow & { key_fingerprint: string }>(`
      SELECT k.fingerprint AS key_fingerprint, t.* FROM task_keys AS k JOIN tasks AS t ON t.id = k.task_id
      WHERE k.owner_key = @ownerKey AND k.key = @key`),

    release: db.prepare<[KeyParams & { taskId: string }], unknown>(`
      DELETE FROM task_keys WHERE owner_key = @ownerKey AND key = @key AND task_id = @taskId`),
  };
}
