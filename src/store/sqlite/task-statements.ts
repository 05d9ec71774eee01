/** Creating, reading, listing and moving single tasks. */
import type { SqliteDatabase as Database, Statement } from "./driver.js";
import { ACTIVE_SQL, TERMINAL_SQL, type TaskRow } from "./rows.js";

export interface InsertTaskParams {
  id: string;
  owner: string | null;
  method: string;
  name: string;
  request: string;
  origin: string;
  createdAt: number;
  ttlMs: number | null;
  expiresAt: number | null;
  pollIntervalMs: number | null;
  retryable: number;
}

export interface TransitionParams {
  id: string;
  /** JSON array of the statuses the task may currently be in. */
  from: string;
  to: string;
  now: number;
  /** 1 keeps the current status message, 0 writes `statusMessage`. */
  keepMessage: number;
  statusMessage: string | null;
  /** JSON text, or null to keep the current outcome. */
  outcome: string | null;
}

export interface AnnotateParams {
  id: string;
  now: number;
  keepMessage: number;
  statusMessage: string | null;
  /** JSON text, or null to keep the current progress. */
  progress: string | null;
}

export interface TaskStatements {
  /** Returns no row when the id is taken (nothing written). */
  insert: Statement<[InsertTaskParams], TaskRow>;
  get: Statement<[string], TaskRow>;
  getOwned: Statement<[string, string | null], TaskRow>;
  listFirst: Statement<[string | null, number], TaskRow>;
  listAfter: Statement<[{ owner: string | null; createdAt: number; id: string; limit: number }], TaskRow>;
  /** The compare-and-set every status change goes through; no row when the CAS failed. */
  transition: Statement<[TransitionParams], TaskRow>;
  annotate: Statement<[AnnotateParams], unknown>;
  /** The task's current status and message as a timeline entry at `now` (an annotate with `timeline`). */
  mark: Statement<[{ id: string; now: number }], unknown>;
}

export function prepareTaskStatements(db: Database): TaskStatements {
  return {
    insert: db.prepare<[InsertTaskParams], TaskRow>(`
      INSERT INTO tasks (id, owner, method, name, request, origin, status, status_message,
                         created_at, updated_at, ttl_ms, expires_at, poll_interval_ms, retryable,
                         outcome, progress)
      VALUES (@id, @owner, @method, @name, @request, @origin, 'working', NULL,
              @createdAt, @createdAt, @ttlMs, @expiresAt, @pollIntervalMs, @retryable,
              NULL, NULL)
      ON CONFLICT (id) DO NOTHING
      RETURNING *`),

    get: db.prepare<[string], TaskRow>(`SELECT * FROM tasks WHERE id = ?`),

    // IS, not =: a null owner must match exactly the tasks created without one.
    getOwned: db.prepare<[string, string | null], TaskRow>(`SELECT * FROM tasks WHERE id = ? AND owner IS ?`),

    listFirst: db.prepare<[string | null, number], TaskRow>(`
      SELECT * FROM tasks WHERE owner IS ?
      ORDER BY created_at, id LIMIT ?`),

    listAfter: db.prepare<[{ owner: string | null; createdAt: number; id: string; limit: number }], TaskRow>(`
      SELECT * FROM tasks
      WHERE owner IS @owner AND (created_at, id) > (@createdAt, @id)
      ORDER BY created_at, id LIMIT @limit`),

    transition: db.prepare<[TransitionParams], TaskRow>(`
      UPDATE tasks SET
        status = @to,
        updated_at = @now,
        status_message = CASE WHEN @keepMessage THEN status_message ELSE @statusMessage END,
        outcome = COALESCE(@outcome, outcome),
        -- Only a handler asks questions: a task in input_required has started, so it is among the
        -- started tasks (tasks_started) even when a caller moved it there without a claim.
        -- A parked task asks nothing (no handler runs it); it stays out of the started tasks.
        started_at = CASE WHEN @to = 'input_required' AND wait_mode IS NOT 'parked' THEN COALESCE(started_at, @now) ELSE started_at END,
        -- A finished task waits for nothing.
        wait_mode = CASE WHEN @to IN ${TERMINAL_SQL} THEN NULL ELSE wait_mode END
      WHERE id = @id AND status IN (SELECT value FROM json_each(@from))
      RETURNING *`),

    annotate: db.prepare<[AnnotateParams], unknown>(`
      UPDATE tasks SET
        updated_at = @now,
        status_message = CASE WHEN @keepMessage THEN status_message ELSE @statusMessage END,
        progress = COALESCE(@progress, progress)
      WHERE id = @id AND status IN ${ACTIVE_SQL}`),

    mark: db.prepare<[{ id: string; now: number }], unknown>(`
      INSERT INTO task_history (task_id, status, status_message, at)
      SELECT id, status, status_message, @now FROM tasks WHERE id = @id`),
  };
}
