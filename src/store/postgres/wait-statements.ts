/** Durable waits (../wait-store.ts): timers and event waits, the events kept for late waits, and parked tasks. */
import { ACTIVE_SQL, claimHeld, statement, timelineOf, type Statement, type Tables } from "./sql.js";

export interface WaitStatements {
  /**
   * ($1 lock class, $2 owner key, $3 event name): the transaction-scoped lock that orders a
   * registration and an emission of one (owner, name), so whichever comes second sees the other.
   */
  lockName: Statement;
  /** ($1 taskId, $2 claim owner or null, $3 claim generation): `held` false when the claim is not the task's; no row for an unknown task. */
  held: Statement;
  /** ($1 taskId, $2 key): the value kept under a wait's checkpoint. */
  kept: Statement;
  /** ($1 owner key, $2 name, $3 afterSeq, $4 since): the oldest stored event a wait would take. */
  firstMatch: Statement;
  /** ($1 taskId, $2 key, $3 value, $4 createdAt): first write wins. */
  keep: Statement;
  /** ($1 taskId, $2 key, $3 kind, $4 owner, $5 owner key, $6 event name, $7 dueAt, $8 afterSeq, $9 since, $10 createdAt). */
  register: Statement;
  /** ($1 taskId): oldest first. */
  waits: Statement;
  /** ($1 owner, $2 owner key, $3 name, $4 payload, $5 createdAt): the event's seq. */
  insertEvent: Statement;
  /**
   * ($1 owner key, $2 name, $3 seq, $4 createdAt, $5 checkpoint value): satisfies every event wait
   * the new event matches; the tasks told (task_id, parked).
   */
  satisfyEvent: Statement;
  /**
   * ($1 now, $2 limit, $3 timer's checkpoint value, $4 timeout's): satisfies up to $2 due waits,
   * oldest due first, skipping those another caller holds; the tasks told, oldest due first.
   */
  fireDue: Statement;
  /** () */
  nextDue: Statement;
  /** ($1 now): n, the waits due and not fired yet. */
  countDue: Statement;
  /** ($1 taskId, $2 mode or null, $3 claim owner, $4 claim generation): "memory" or none, on a live task. */
  setMode: Statement;
  /** ($1 taskId): locks the task's row, so what it waits for is read after any write that satisfies it. */
  lockTask: Statement;
  /**
   * ($1 taskId, $2 claim owner, $3 claim generation): parks a live task (lease dropped) that still
   * waits for something; one with nothing left to wait for is queued at once (input_required →
   * working, with its timeline entry). n = 1 when written.
   */
  park: Statement;
  /** ($1 taskId, $2 now): n = 1 when it woke the task. */
  wakeAnswered: Statement;
  /** ($1 taskId) */
  waitMode: Statement;
  /** () */
  parkedCounts: Statement;
  /** ($1 time, $2 limit) */
  dropEvents: Statement;
}

/**
 * The end of the statements that satisfy waits: `fired` (the waits this statement deleted: task_id,
 * key, kind, due_at) have their outcome kept as their checkpoint, and their live tasks are woken —
 * each task's row locked in id order (as every statement writing several tasks), a parked one
 * queued again. Every told task's row is locked, parked or not, so a concurrent park (which locks
 * the row before it reads what the task waits for) either sees the wait gone or is seen parked.
 */
function wakeFired(t: Tables, value: string): string {
  return `live AS (
         SELECT f.task_id, f.key, f.kind, f.due_at FROM fired AS f JOIN ${t.tasks} AS t ON t.id = f.task_id
         WHERE t.status IN ${ACTIVE_SQL}),
       kept AS (
         INSERT INTO ${t.checkpoints} (task_id, name, value, created_at)
         SELECT task_id, key, ${value} FROM live
         ON CONFLICT (task_id, name) DO NOTHING),
       locked AS (
         SELECT id, wait_mode FROM ${t.tasks} WHERE id IN (SELECT task_id FROM live) AND status IN ${ACTIVE_SQL}
         ORDER BY id FOR NO KEY UPDATE),
       woke AS (
         UPDATE ${t.tasks} AS t SET wait_mode = NULL
         FROM locked WHERE t.id = locked.id AND locked.wait_mode = 'parked'
         RETURNING t.id)
       SELECT l.task_id, bool_or(l.task_id IN (SELECT id FROM woke)) AS parked
       FROM live AS l JOIN locked ON locked.id = l.task_id
       GROUP BY l.task_id ORDER BY min(l.due_at) NULLS LAST, l.task_id`;
}

export function waitStatements(t: Tables): WaitStatements {
  const waitColumns = "task_id, key, kind, owner, event_name, due_at, after_seq, since, created_at";
  // A parked task still waits when a wait of it is registered or a question of it is unanswered.
  const waiting = (id: string): string => `(EXISTS (SELECT 1 FROM ${t.waits} AS w WHERE w.task_id = ${id})
           OR EXISTS (SELECT 1 FROM ${t.inputs} AS i WHERE i.task_id = ${id} AND i.answer IS NULL))`;
  return {
    lockName: statement("lock_wait_name", `SELECT pg_advisory_xact_lock($1::int, hashtext($2::text || chr(10) || $3::text))`),

    held: statement("wait_claim_held", `SELECT ${claimHeld("$2", "$3")} AS held FROM ${t.tasks} WHERE id = $1`),

    kept: statement("wait_kept", `SELECT value FROM ${t.checkpoints} WHERE task_id = $1 AND name = $2`),

    firstMatch: statement(
      "wait_first_match",
      `SELECT seq, payload, created_at FROM ${t.waitEvents}
       WHERE owner_key = $1 AND name = $2 AND seq > $3::bigint AND created_at >= $4::bigint
       ORDER BY seq LIMIT 1`,
    ),

    keep: statement(
      "wait_keep",
      `INSERT INTO ${t.checkpoints} (task_id, name, value, created_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (task_id, name) DO NOTHING`,
    ),

    register: statement(
      "register_wait",
      `INSERT INTO ${t.waits} (task_id, key, kind, owner, owner_key, event_name, due_at, after_seq, since, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (task_id, key) DO NOTHING`,
    ),

    waits: statement("task_waits", `SELECT ${waitColumns} FROM ${t.waits} WHERE task_id = $1 ORDER BY created_at, seq`),

    insertEvent: statement(
      "insert_wait_event",
      `INSERT INTO ${t.waitEvents} (owner, owner_key, name, payload, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING seq`,
    ),

    satisfyEvent: statement(
      "satisfy_event_waits",
      `WITH fired AS (
         DELETE FROM ${t.waits}
         WHERE kind = 'event' AND owner_key = $1 AND event_name = $2 AND after_seq < $3::bigint AND since <= $4::bigint
         RETURNING task_id, key, kind, due_at),
       ${wakeFired(t, "$5::text, $4::bigint")}`,
    ),

    fireDue: statement(
      "fire_due_waits",
      `WITH due AS (
         SELECT task_id, key FROM ${t.waits}
         WHERE due_at IS NOT NULL AND due_at <= $1::bigint
         ORDER BY due_at, created_at, seq LIMIT $2
         FOR UPDATE SKIP LOCKED),
       fired AS (
         DELETE FROM ${t.waits} AS w USING due WHERE w.task_id = due.task_id AND w.key = due.key
         RETURNING w.task_id, w.key, w.kind, w.due_at),
       ${wakeFired(t, "CASE WHEN kind = 'timer' THEN $3::text ELSE $4::text END, $1::bigint")}`,
    ),

    nextDue: statement("next_due_wait", `SELECT min(due_at) AS at FROM ${t.waits} WHERE due_at IS NOT NULL`),

    countDue: statement("count_due_waits", `SELECT count(*)::int AS n FROM ${t.waits} WHERE due_at IS NOT NULL AND due_at <= $1::bigint`),

    setMode: statement(
      "set_wait_mode",
      `UPDATE ${t.tasks} SET wait_mode = $2::text WHERE id = $1 AND status IN ${ACTIVE_SQL} AND ${claimHeld("$3", "$4")} RETURNING id`,
    ),

    lockTask: statement("lock_waiting_task", `SELECT id FROM ${t.tasks} WHERE id = $1 FOR NO KEY UPDATE`),

    park: statement(
      "park_task",
      `WITH before AS (
         SELECT s.id, s.status AS was, ${waiting("s.id")} AS waits FROM ${t.tasks} AS s
         WHERE s.id = $1 AND s.status IN ${ACTIVE_SQL} AND ${claimHeld("$2", "$3", "s")}),
       parked AS (
         UPDATE ${t.tasks} AS t SET
           wait_mode = CASE WHEN b.waits THEN 'parked' ELSE NULL END,
           status = CASE WHEN b.waits THEN t.status ELSE 'working' END,
           lease_owner = NULL,
           lease_expires_at = NULL
         FROM before AS b WHERE t.id = b.id
         RETURNING t.id, t.status, t.status_message, t.updated_at, b.was),
       moved AS (SELECT id, status, status_message, updated_at FROM parked WHERE status <> was),
       ${timelineOf(t, "moved", "updated_at", "$2::text")}
       SELECT count(*) AS n FROM parked`,
    ),

    wakeAnswered: statement(
      "wake_answered",
      `WITH woke AS (
         UPDATE ${t.tasks} SET status = 'working', updated_at = $2, wait_mode = NULL
         WHERE id = $1 AND wait_mode = 'parked' AND status = 'input_required'
           AND NOT EXISTS (SELECT 1 FROM ${t.inputs} WHERE task_id = $1 AND answer IS NULL)
         RETURNING id, status, status_message, updated_at),
       ${timelineOf(t, "woke", "updated_at")}
       SELECT count(*) AS n FROM woke`,
    ),

    waitMode: statement("wait_mode", `SELECT wait_mode FROM ${t.tasks} WHERE id = $1`),

    // Each parked task once: a question first, then a timer, then an event (tasks_waiting holds only waiting tasks).
    parkedCounts: statement(
      "parked_counts",
      `SELECT count(*) FILTER (WHERE kind = 'input') AS input, count(*) FILTER (WHERE kind = 'timer') AS timer,
              count(*) FILTER (WHERE kind = 'event') AS event
       FROM (SELECT CASE
               WHEN t.status = 'input_required' THEN 'input'
               WHEN EXISTS (SELECT 1 FROM ${t.waits} AS w WHERE w.task_id = t.id AND w.kind = 'timer') THEN 'timer'
               WHEN EXISTS (SELECT 1 FROM ${t.waits} AS w WHERE w.task_id = t.id AND w.kind = 'event') THEN 'event'
             END AS kind
             FROM ${t.tasks} AS t WHERE t.wait_mode = 'parked') AS p`,
    ),

    dropEvents: statement(
      "drop_wait_events",
      `WITH dropped AS (
         DELETE FROM ${t.waitEvents} WHERE seq IN (
           SELECT seq FROM ${t.waitEvents} WHERE created_at < $1::bigint ORDER BY created_at, seq LIMIT $2)
         RETURNING seq)
       SELECT count(*) AS n FROM dropped`,
    ),
  };
}
