/** Durable waits (../wait-store.ts): timers and event waits, the events kept for late waits, and parked tasks. */
import type { SqliteDatabase as Database, Statement } from "./driver.js";
import { ACTIVE_SQL } from "./rows.js";
import type { WaitRow } from "../sql/wait-rows.js";

export interface EventRow {
  seq: number;
  owner: string | null;
  name: string;
  payload: string;
  created_at: number;
}

export interface RegisterParams {
  taskId: string;
  key: string;
  kind: string;
  owner: string | null;
  eventName: string | null;
  dueAt: number | null;
  afterSeq: number;
  since: number;
  createdAt: number;
}

export interface WaitStatements {
  /** Registers a wait of an existing task; no change when the key is registered already. */
  register: Statement<[RegisterParams], unknown>;
  /** (taskId): oldest first. */
  waits: Statement<[string], WaitRow>;
  /** (taskId, key): the checkpoint kept under a wait's key. */
  kept: Statement<[string, string], { value: string }>;
  /** The oldest stored event a wait would take. */
  firstMatch: Statement<[{ owner: string | null; name: string; afterSeq: number; since: number }], EventRow>;
  insertEvent: Statement<[{ owner: string | null; name: string; payload: string; createdAt: number }], { seq: number }>;
  /** The registered event waits a new event satisfies. */
  matching: Statement<[{ owner: string | null; name: string; seq: number; createdAt: number }], WaitRow>;
  /** Removes one wait: 1 change for the one write that satisfies it. */
  remove: Statement<[string, string], unknown>;
  /** (now, limit): due waits, oldest due first. */
  due: Statement<[number, number], WaitRow>;
  nextDue: Statement<[], { at: number | null }>;
  /** (now) */
  countDue: Statement<[number], { n: number }>;
  /** Queues a parked live task again; a row only when it was parked. */
  wakeParked: Statement<[string], { id: string }>;
  /** The status of a task (to tell a live task from a finished or deleted one). */
  status: Statement<[string], { status: string; wait_mode: string | null }>;
  /** (mode, id): "memory" or null on a live task. */
  setMode: Statement<[string | null, string], unknown>;
  /** Parks a live task that still waits for something: a registered wait or an unanswered question. */
  park: Statement<[{ id: string }], unknown>;
  /** A live task with nothing left to wait for is queued at once instead (input_required → working). */
  requeue: Statement<[string], unknown>;
  wakeAnswered: Statement<[{ id: string; now: number }], unknown>;
  parkedCounts: Statement<[], { input: number | null; timer: number | null; event: number | null }>;
  /** (time, limit) */
  dropEvents: Statement<[number, number], unknown>;
}

export function prepareWaitStatements(db: Database): WaitStatements {
  return {
    register: db.prepare<[RegisterParams], unknown>(`
      INSERT INTO task_waits (task_id, key, kind, owner, event_name, due_at, after_seq, since, created_at)
      SELECT @taskId, @key, @kind, @owner, @eventName, @dueAt, @afterSeq, @since, @createdAt
      WHERE EXISTS (SELECT 1 FROM tasks WHERE id = @taskId)
      ON CONFLICT (task_id, key) DO NOTHING`),

    // rowid: registrations of one millisecond in the order they were made.
    waits: db.prepare<[string], WaitRow>(`SELECT * FROM task_waits WHERE task_id = ? ORDER BY created_at, rowid`),

    kept: db.prepare<[string, string], { value: string }>(`SELECT value FROM task_checkpoints WHERE task_id = ? AND name = ?`),

    // IS, not =: a null owner is its own owner. wait_events_match (owner, name, seq) answers it.
    firstMatch: db.prepare(`
      SELECT * FROM wait_events
      WHERE owner IS @owner AND name = @name AND seq > @afterSeq AND created_at >= @since
      ORDER BY seq LIMIT 1`),

    insertEvent: db.prepare(`
      INSERT INTO wait_events (owner, name, payload, created_at) VALUES (@owner, @name, @payload, @createdAt) RETURNING seq`),

    matching: db.prepare(`
      SELECT * FROM task_waits
      WHERE kind = 'event' AND owner IS @owner AND event_name = @name AND after_seq < @seq AND since <= @createdAt
      ORDER BY created_at, rowid`),

    remove: db.prepare<[string, string], unknown>(`DELETE FROM task_waits WHERE task_id = ? AND key = ?`),

    due: db.prepare<[number, number], WaitRow>(`
      SELECT * FROM task_waits INDEXED BY task_waits_due
      WHERE due_at IS NOT NULL AND due_at <= ? ORDER BY due_at, created_at, rowid LIMIT ?`),

    nextDue: db.prepare<[], { at: number | null }>(`SELECT min(due_at) AS at FROM task_waits WHERE due_at IS NOT NULL`),

    countDue: db.prepare<[number], { n: number }>(
      `SELECT count(*) AS n FROM task_waits INDEXED BY task_waits_due WHERE due_at IS NOT NULL AND due_at <= ?`,
    ),

    wakeParked: db.prepare<[string], { id: string }>(`
      UPDATE tasks SET wait_mode = NULL, started_at = NULL
      WHERE id = ? AND wait_mode = 'parked' AND status IN ${ACTIVE_SQL}
      RETURNING id`),

    status: db.prepare<[string], { status: string; wait_mode: string | null }>(`SELECT status, wait_mode FROM tasks WHERE id = ?`),

    setMode: db.prepare<[string | null, string], unknown>(`UPDATE tasks SET wait_mode = ? WHERE id = ? AND status IN ${ACTIVE_SQL}`),

    park: db.prepare<[{ id: string }], unknown>(`
      UPDATE tasks SET wait_mode = 'parked', started_at = NULL
      WHERE id = @id AND status IN ${ACTIVE_SQL}
        AND (EXISTS (SELECT 1 FROM task_waits WHERE task_id = @id)
             OR EXISTS (SELECT 1 FROM task_inputs WHERE task_id = @id AND answer IS NULL))`),

    requeue: db.prepare<[string], unknown>(`
      UPDATE tasks SET wait_mode = NULL, started_at = NULL, status = 'working'
      WHERE id = ? AND status IN ${ACTIVE_SQL}`),

    // The history trigger appends the move (status, message, updated_at); the count triggers count it.
    wakeAnswered: db.prepare<[{ id: string; now: number }], unknown>(`
      UPDATE tasks SET status = 'working', updated_at = @now, wait_mode = NULL, started_at = NULL
      WHERE id = @id AND wait_mode = 'parked' AND status = 'input_required'
        AND NOT EXISTS (SELECT 1 FROM task_inputs WHERE task_id = @id AND answer IS NULL)`),

    // Each parked task once: a question first, then a timer, then an event (tasks_waiting holds only waiting tasks).
    parkedCounts: db.prepare(`
      SELECT sum(kind = 'input') AS input, sum(kind = 'timer') AS timer, sum(kind = 'event') AS event FROM (
        SELECT CASE
          WHEN t.status = 'input_required' THEN 'input'
          WHEN EXISTS (SELECT 1 FROM task_waits AS w WHERE w.task_id = t.id AND w.kind = 'timer') THEN 'timer'
          WHEN EXISTS (SELECT 1 FROM task_waits AS w WHERE w.task_id = t.id AND w.kind = 'event') THEN 'event'
        END AS kind
        FROM tasks AS t INDEXED BY tasks_waiting WHERE t.wait_mode = 'parked')`),

    dropEvents: db.prepare<[number, number], unknown>(`
      DELETE FROM wait_events WHERE seq IN (
        SELECT seq FROM wait_events WHERE created_at < ? ORDER BY created_at, seq LIMIT ?)`),
  };
}
