import type { SqliteDatabase as Database } from "./driver.js";
import { OUTBOX_MIGRATION } from "./outbox-statements.js";
import { TOOL_PAUSES_MIGRATION } from "./tool-pause-statements.js";

// The kept counts (appended as the last migration): counts per (owner, tool, status), kept by triggers in the very statement that creates, moves
// or deletes a task — so countByStatus reads a few rows instead of every task, and the counts can
// never disagree with the rows, whichever process or code path writes.
// owner_key encodes the owner so that a task without one has a key too ('N'; 'O' || owner
// otherwise): a NULL in a primary key would never conflict, and the upsert would add rows.
const COUNTS_MIGRATION = `
  CREATE TABLE task_counts (
    owner_key TEXT NOT NULL,
    name      TEXT NOT NULL,
    status    TEXT NOT NULL,
    n         INTEGER NOT NULL,
    PRIMARY KEY (owner_key, name, status)
  ) WITHOUT ROWID;

  CREATE TRIGGER task_counts_created AFTER INSERT ON tasks BEGIN
    INSERT INTO task_counts (owner_key, name, status, n)
    VALUES (CASE WHEN NEW.owner IS NULL THEN 'N' ELSE 'O' || NEW.owner END, NEW.name, NEW.status, 1)
    ON CONFLICT (owner_key, name, status) DO UPDATE SET n = n + 1;
  END;
  CREATE TRIGGER task_counts_moved AFTER UPDATE OF status, owner, name ON tasks
  WHEN NEW.status IS NOT OLD.status OR NEW.owner IS NOT OLD.owner OR NEW.name IS NOT OLD.name BEGIN
    UPDATE task_counts SET n = n - 1
    WHERE owner_key = CASE WHEN OLD.owner IS NULL THEN 'N' ELSE 'O' || OLD.owner END
      AND name = OLD.name AND status = OLD.status;
    INSERT INTO task_counts (owner_key, name, status, n)
    VALUES (CASE WHEN NEW.owner IS NULL THEN 'N' ELSE 'O' || NEW.owner END, NEW.name, NEW.status, 1)
    ON CONFLICT (owner_key, name, status) DO UPDATE SET n = n + 1;
  END;
  -- Rows that fall to 0 on deletion go, so owners and tools that come and go leave nothing behind.
  CREATE TRIGGER task_counts_deleted AFTER DELETE ON tasks BEGIN
    UPDATE task_counts SET n = n - 1
    WHERE owner_key = CASE WHEN OLD.owner IS NULL THEN 'N' ELSE 'O' || OLD.owner END
      AND name = OLD.name AND status = OLD.status;
    DELETE FROM task_counts
    WHERE owner_key = CASE WHEN OLD.owner IS NULL THEN 'N' ELSE 'O' || OLD.owner END
      AND name = OLD.name AND status = OLD.status AND n = 0;
  END;

  -- Files written before: count what they hold.
  INSERT INTO task_counts (owner_key, name, status, n)
    SELECT CASE WHEN owner IS NULL THEN 'N' ELSE 'O' || owner END, name, status, count(*)
    FROM tasks GROUP BY 1, 2, 3;
  `;

// Idempotency keys (docs/idempotency.md, SEP-3182): the primary key makes a key unique
// per owner, so of concurrent creations under one key exactly one stores its task; the key is
// written in the same transaction as its task and deleted with it, whichever path deletes.
// owner_key as in task_counts ('N' without an owner, 'O' || owner otherwise).
const KEYS_MIGRATION = `
  CREATE TABLE task_keys (
    owner_key   TEXT NOT NULL,
    key         TEXT NOT NULL,
    task_id     TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    PRIMARY KEY (owner_key, key)
  ) WITHOUT ROWID;
  CREATE INDEX task_keys_task ON task_keys (task_id);
  CREATE TRIGGER task_keys_deleted AFTER DELETE ON tasks BEGIN
    DELETE FROM task_keys WHERE task_id = OLD.id;
  END;
  `;

// The run queue (appended as its own migration): `started_at` is when a handler first took the
// task; NULL while it waits in the queue. The dispatcher's claim (queue-statements.ts) sets it in
// the statement that picks the task, so a queued task survives a restart as queued and recovery
// looks only at tasks whose handler had started. Live tasks of files written before were all
// started (every task ran as soon as it was created).
const QUEUE_MIGRATION = `
  ALTER TABLE tasks ADD COLUMN started_at INTEGER;
  UPDATE tasks SET started_at = created_at WHERE status IN ('working', 'input_required');
  -- The queue, per owner in creation order: the fair claim reads each owner's head from it.
  CREATE INDEX tasks_queued ON tasks (owner, created_at, id) WHERE status = 'working' AND started_at IS NULL;
  -- The handlers running now, per owner and tool (the caps), and recovery's look at them.
  CREATE INDEX tasks_started ON tasks (owner, name) WHERE started_at IS NOT NULL AND status IN ('working', 'input_required');
  `;

// Retention (docs/limits.md): `fetched_at` is when a task's result was first delivered, so the
// sweep can count results that expired unread; `expired_tasks` remembers, for a bounded time, the
// ids the sweep deleted, so a late lookup still answers "expired" rather than "not found".
const RETENTION_MIGRATION = `
  ALTER TABLE tasks ADD COLUMN fetched_at INTEGER;
  CREATE TABLE expired_tasks (
    id         TEXT PRIMARY KEY,
    owner      TEXT,
    expired_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX expired_tasks_at ON expired_tasks (expired_at);
  `;

// Fewer b-trees written per task: every live task is in one of the run queue's two partial
// indexes (tasks_queued: working without a handler yet; tasks_started: with one), and the kept
// counts answer "how many live tasks has this owner" in a few rows, so the third index of live
// tasks only cost an insert with every creation and a delete with every ending.
// A task in input_required counts as started (a handler asked its question) even if a file
// holds one that was moved there without a claim.
const LEAN_INDEXES_MIGRATION = `
  UPDATE tasks SET started_at = updated_at WHERE status = 'input_required' AND started_at IS NULL;
  DROP INDEX IF EXISTS tasks_active;
  `;

// Durable waits (../wait-store.ts). `wait_mode` marks a task that holds no handler slot while it
// waits: a parked one is in neither run-queue index (tasks_queued now leaves it out; it has no
// started_at), so 100,000 of them cost their rows, their waits and one entry of tasks_waiting
// (which parkedCounts reads) — nothing a claim or a count of the queue walks.
// task_waits: timers and event waits, fired from task_waits_due, matched at emission through
// task_waits_event. wait_events: the events kept for a wait that starts late (the event window),
// matched through (owner, name, seq); seq only grows (AUTOINCREMENT: never reused after a drop).
const WAITS_MIGRATION = `
  ALTER TABLE tasks ADD COLUMN wait_mode TEXT CHECK (wait_mode IN ('memory', 'parked'));
  DROP INDEX tasks_queued;
  CREATE INDEX tasks_queued ON tasks (owner, created_at, id) WHERE status = 'working' AND started_at IS NULL AND wait_mode IS NULL;
  CREATE INDEX tasks_waiting ON tasks (wait_mode) WHERE wait_mode IS NOT NULL;

  CREATE TABLE task_waits (
    task_id    TEXT NOT NULL,
    key        TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('timer', 'event')),
    owner      TEXT,
    event_name TEXT,
    due_at     INTEGER,
    after_seq  INTEGER NOT NULL,
    since      INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (task_id, key)
  );
  CREATE INDEX task_waits_due ON task_waits (due_at) WHERE due_at IS NOT NULL;
  CREATE INDEX task_waits_event ON task_waits (owner, event_name) WHERE kind = 'event';
  CREATE TRIGGER task_waits_deleted AFTER DELETE ON tasks BEGIN
    DELETE FROM task_waits WHERE task_id = OLD.id;
  END;

  CREATE TABLE wait_events (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    owner      TEXT,
    name       TEXT NOT NULL,
    payload    TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX wait_events_match ON wait_events (owner, name, seq);
  CREATE INDEX wait_events_created ON wait_events (created_at);
  `;

/**
 * Schema history, oldest first. `PRAGMA user_version` records how many have been applied, so a
 * migration runs exactly once per file. Never edit an applied entry: append a new one.
 */
const MIGRATIONS: readonly string[] = [
  // 1: tasks, their input queues, and store-wide secrets.
  `
  CREATE TABLE tasks (
    id               TEXT PRIMARY KEY,
    owner            TEXT,
    method           TEXT NOT NULL,
    name             TEXT NOT NULL,
    request          TEXT NOT NULL,
    origin           TEXT NOT NULL,
    status           TEXT NOT NULL
                     CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
    status_message   TEXT,
    created_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    ttl_ms           INTEGER,
    expires_at       INTEGER,
    poll_interval_ms INTEGER,
    retryable        INTEGER NOT NULL CHECK (retryable IN (0, 1)),
    outcome          TEXT,
    progress         TEXT
  );
  -- tasks/list: keyset walk per owner.
  CREATE INDEX tasks_owner_created ON tasks (owner, created_at, id);
  -- TTL sweeps; unlimited tasks never need to be looked at.
  CREATE INDEX tasks_expires ON tasks (expires_at, id) WHERE expires_at IS NOT NULL;
  -- Recovery and per-owner concurrency limits only ever look at the (few) live tasks.
  CREATE INDEX tasks_active ON tasks (owner, status) WHERE status IN ('working', 'input_required');

  CREATE TABLE task_inputs (
    task_id    TEXT NOT NULL,
    id         TEXT NOT NULL,
    method     TEXT NOT NULL,
    params     TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    answer     TEXT,
    PRIMARY KEY (task_id, id)
  );

  CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value BLOB NOT NULL
  );
  `,
  // 2: the status timeline of every task, and an index for the operator's view (newest first). The timeline is written by triggers, so it is part of the very statement
  // that changes the status — atomic with it, whichever process or code path writes.
  `
  CREATE TABLE task_history (
    task_id        TEXT NOT NULL,
    status         TEXT NOT NULL,
    status_message TEXT,
    at             INTEGER NOT NULL
  );
  CREATE INDEX task_history_task ON task_history (task_id);

  CREATE TRIGGER task_history_created AFTER INSERT ON tasks BEGIN
    INSERT INTO task_history (task_id, status, status_message, at)
    VALUES (NEW.id, NEW.status, NEW.status_message, NEW.created_at);
  END;
  CREATE TRIGGER task_history_moved AFTER UPDATE OF status ON tasks WHEN NEW.status IS NOT OLD.status BEGIN
    INSERT INTO task_history (task_id, status, status_message, at)
    VALUES (NEW.id, NEW.status, NEW.status_message, NEW.updated_at);
  END;
  CREATE TRIGGER task_history_deleted AFTER DELETE ON tasks BEGIN
    DELETE FROM task_history WHERE task_id = OLD.id;
  END;

  -- Files written by schema 1 have no timeline: start one from what the row still tells.
  INSERT INTO task_history (task_id, status, status_message, at)
    SELECT id, 'working', NULL, created_at FROM tasks;
  INSERT INTO task_history (task_id, status, status_message, at)
    SELECT id, status, status_message, updated_at FROM tasks WHERE status <> 'working';

  -- Newest first across owners. Deliberately no index led by status: the planner would prefer it
  -- for the expiry sweeps (status IN … AND expires_at <= ?) and scan every terminal task.
  CREATE INDEX tasks_created ON tasks (created_at, id);
  `,
  // Durable execution: the checkpointed results of handlers' steps (docs/durable-execution.md).
  // The first write of a (task, name) wins (INSERT … ON CONFLICT DO NOTHING); a task's deletion
  // takes its checkpoints with it, whichever code path deletes it.
  `
  CREATE TABLE task_checkpoints (
    task_id    TEXT NOT NULL,
    name       TEXT NOT NULL,
    value      TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (task_id, name)
  );
  CREATE TRIGGER task_checkpoints_deleted AFTER DELETE ON tasks BEGIN
    DELETE FROM task_checkpoints WHERE task_id = OLD.id;
  END;
  `,
  // Streamable HTTP's SSE events, kept for Last-Event-ID resumption (stream-event-store.ts). The
  // rowid is the event id: it only grows (AUTOINCREMENT: never reused after a prune).
  `
  CREATE TABLE stream_events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    session_key TEXT NOT NULL,
    stream_id   TEXT NOT NULL,
    message     TEXT NOT NULL,
    created_at  INTEGER NOT NULL
  );
  CREATE INDEX stream_events_stream ON stream_events (session_key, stream_id, id);
  CREATE INDEX stream_events_created ON stream_events (created_at);
  `,
  COUNTS_MIGRATION,
  KEYS_MIGRATION,
  QUEUE_MIGRATION,
  RETENTION_MIGRATION,
  LEAN_INDEXES_MIGRATION,
  WAITS_MIGRATION,
  OUTBOX_MIGRATION,
  TOOL_PAUSES_MIGRATION,
];

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** The version that drops the third index of live tasks (for tests of upgrades across it). */
export const LEAN_INDEXES_VERSION = MIGRATIONS.indexOf(LEAN_INDEXES_MIGRATION) + 1;

/** The version that adds durable waits (for tests of upgrades across it). */
export const WAITS_VERSION = MIGRATIONS.indexOf(WAITS_MIGRATION) + 1;

/** The version that adds the kept counts per (owner, tool, status) (for tests of its backfill). */
export const COUNTS_VERSION = MIGRATIONS.indexOf(COUNTS_MIGRATION) + 1;

/**
 * Brings the file up to {@link SCHEMA_VERSION} (or `target`, for tests of upgrades from an older
 * schema). Safe to call on every open and from several processes at once: the version is re-read
 * inside an IMMEDIATE transaction, so only the first opener applies anything.
 *
 * @throws Error when the file was written by a newer schema than this code knows.
 */
export function migrate(db: Database, target: number = SCHEMA_VERSION): void {
  const apply = db.transaction(() => {
    const current = db.pragma("user_version", { simple: true });
    if (typeof current !== "number") throw new Error("cannot read the task store schema version");
    if (current > SCHEMA_VERSION) {
      throw new Error(`task store schema version ${current} is newer than this build supports (${SCHEMA_VERSION})`);
    }
    const goal = Math.min(Math.max(0, Math.floor(target)), SCHEMA_VERSION);
    for (let version = current; version < goal; version++) {
      const migration = MIGRATIONS[version];
      if (migration !== undefined) db.exec(migration);
    }
    // PRAGMA takes no bound parameters; goal is a small integer.
    if (current < goal) db.pragma(`user_version = ${goal}`);
  });
  apply.immediate();
}
