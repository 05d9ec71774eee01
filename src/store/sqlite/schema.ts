import type { Database } from "better-sqlite3";

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
];

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the file up to {@link SCHEMA_VERSION}. Safe to call on every open and from several
 * processes at once: the version is re-read inside an IMMEDIATE transaction, so only the first
 * opener applies anything.
 *
 * @throws Error when the file was written by a newer schema than this code knows.
 */
export function migrate(db: Database): void {
  const apply = db.transaction(() => {
    const current = db.pragma("user_version", { simple: true });
    if (typeof current !== "number") throw new Error("cannot read the task store schema version");
    if (current > SCHEMA_VERSION) {
      throw new Error(`task store schema version ${current} is newer than this build supports (${SCHEMA_VERSION})`);
    }
    for (let version = current; version < SCHEMA_VERSION; version++) {
      const migration = MIGRATIONS[version];
      if (migration !== undefined) db.exec(migration);
    }
    // PRAGMA takes no bound parameters; SCHEMA_VERSION is a small integer constant.
    if (current !== SCHEMA_VERSION) db.pragma(`user_version = ${SCHEMA_VERSION}`);
  });
  apply.immediate();
}
