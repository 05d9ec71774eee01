/**
 * The PostgreSQL schema and its migrations. Run on a store's first use, idempotently, and safe
 * when several nodes start at once: everything happens in one transaction that first takes a
 * transaction-scoped advisory lock for the schema, so one node migrates while the others wait and
 * then find nothing left to do.
 */
import type pg from "pg";
import type { Tables } from "./sql.js";
import { OUTBOX_LEASED_WRITES_MIGRATION, OUTBOX_MIGRATION, OUTBOX_ROUTE_LOOP_MIGRATION } from "./outbox-statements.js";
import { TOOL_PAUSES_MIGRATION } from "./tool-pause-statements.js";

// The kept counts (appended as the last migration): counts per (owner, tool, status), so countByStatus reads a few rows instead of every task.
// A row trigger appends a +1/-1 delta row for every create, status change and
// delete, in the writing statement itself — also inside the batched `UPDATE … FROM unnest` and
// the CTEs of leases and sweeps — so the counts are exact in every transaction. Deltas are
// appended, never updated: writers take no row lock on a shared counter, so concurrent status
// changes never queue behind one hot row (nor deadlock on two). Reads sum the compacted counts and
// the deltas in one snapshot; compaction (countByStatus, the expiry sweep) folds the deltas into
// task_counts. owner_key: 'N' for no owner, 'O' || owner otherwise (NULL never conflicts).
const COUNTS_MIGRATION = (t: Tables): string => `
  CREATE TABLE ${t.counts} (
    owner_key TEXT COLLATE "C" NOT NULL,
    name      TEXT COLLATE "C" NOT NULL,
    status    TEXT NOT NULL,
    n         BIGINT NOT NULL,
    PRIMARY KEY (owner_key, name, status)
  );
  CREATE TABLE ${t.countDeltas} (
    owner_key TEXT COLLATE "C" NOT NULL,
    name      TEXT COLLATE "C" NOT NULL,
    status    TEXT NOT NULL,
    delta     INT NOT NULL
  );

  CREATE FUNCTION ${t.schema}.task_counts_delta() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    IF TG_OP <> 'INSERT' THEN
      INSERT INTO ${t.countDeltas} (owner_key, name, status, delta)
      VALUES (CASE WHEN OLD.owner IS NULL THEN 'N' ELSE 'O' || OLD.owner END, OLD.name, OLD.status, -1);
    END IF;
    IF TG_OP <> 'DELETE' THEN
      INSERT INTO ${t.countDeltas} (owner_key, name, status, delta)
      VALUES (CASE WHEN NEW.owner IS NULL THEN 'N' ELSE 'O' || NEW.owner END, NEW.name, NEW.status, 1);
    END IF;
    RETURN NULL;
  END
  $fn$;
  CREATE TRIGGER task_counts_written AFTER INSERT OR DELETE ON ${t.tasks}
    FOR EACH ROW EXECUTE FUNCTION ${t.schema}.task_counts_delta();
  CREATE TRIGGER task_counts_moved AFTER UPDATE OF status, owner, name ON ${t.tasks}
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.owner IS DISTINCT FROM NEW.owner OR OLD.name IS DISTINCT FROM NEW.name)
    EXECUTE FUNCTION ${t.schema}.task_counts_delta();

  -- Schemas written before: count what they hold (inside the migration's transaction and lock).
  INSERT INTO ${t.counts} (owner_key, name, status, n)
    SELECT CASE WHEN owner IS NULL THEN 'N' ELSE 'O' || owner END, name, status, count(*)
    FROM ${t.tasks} GROUP BY 1, 2, 3;
  `;

// ── Fencing of worker writes ─────────────────────────────────────────────────────────────────
// Every claim of a task counts one more generation, never less (attempts, which a hand-back
// un-counts, cannot tell two claims of one worker apart). A worker's writes for the task name
// (lease_owner, claim_generation) in their WHERE: a write of a superseded claim matches nothing.
const CLAIM_GENERATION_MIGRATION = (t: Tables): string => `
  ALTER TABLE ${t.tasks} ADD COLUMN claim_generation BIGINT NOT NULL DEFAULT 0;
  UPDATE ${t.tasks} SET claim_generation = attempts WHERE attempts > 0;
  `;

// Idempotency keys (docs/idempotency.md, SEP-3182): the primary key makes a key unique
// per owner, so of concurrent creations under one key — on any node — exactly one stores its task
// (the key and the task are written by one statement, key-statements.ts); deleted with the task.
// owner_key as in task_counts ('N' without an owner, 'O' || owner otherwise).
const KEYS_MIGRATION = (t: Tables): string => `
  CREATE TABLE ${t.keys} (
    owner_key   TEXT COLLATE "C" NOT NULL,
    key         TEXT COLLATE "C" NOT NULL,
    task_id     TEXT COLLATE "C" NOT NULL,
    fingerprint TEXT NOT NULL,
    PRIMARY KEY (owner_key, key)
  );
  CREATE INDEX task_keys_task ON ${t.keys} (task_id);
  CREATE FUNCTION ${t.schema}.task_keys_deleted() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    DELETE FROM ${t.keys} WHERE task_id = OLD.id;
    RETURN NULL;
  END
  $fn$;
  CREATE TRIGGER task_keys_deleted AFTER DELETE ON ${t.tasks}
    FOR EACH ROW EXECUTE FUNCTION ${t.schema}.task_keys_deleted();
  `;

// The fair claim (appended as its own migration): the queue per owner in creation order, so the
// claim's loose index scan finds each owner and reads only the head of each owner's queue
// (lease-statements.ts). The running counts it needs come from tasks_leases.
const QUEUE_MIGRATION = (t: Tables): string => `
  CREATE INDEX tasks_queue_owner ON ${t.tasks} (owner, created_at, id) WHERE status = 'working' AND lease_owner IS NULL;
  `;

// Retention (docs/limits.md): `fetched_at` is when a task's result was first delivered, so the
// sweep can count results that expired unread; `expired_tasks` remembers, for a bounded time, the
// ids the sweep deleted, so a late lookup on any node still answers "expired", not "not found".
const RETENTION_MIGRATION = (t: Tables): string => `
  ALTER TABLE ${t.tasks} ADD COLUMN fetched_at BIGINT;
  CREATE TABLE ${t.expired} (
    id         TEXT COLLATE "C" PRIMARY KEY,
    owner      TEXT,
    expired_at BIGINT NOT NULL
  );
  CREATE INDEX expired_tasks_at ON ${t.expired} (expired_at);
  `;

// Durable waits (../wait-store.ts). `wait_mode` marks a task that holds no handler slot while it
// waits: a parked one holds no lease and is left out of both queue indexes (rebuilt with the new
// predicate), so 100,000 of them cost their rows, their waits and one entry of tasks_waiting (which
// parkedCounts reads) — nothing a claim walks. task_waits: timers and event waits, fired through
// task_waits_due (FOR UPDATE SKIP LOCKED), matched at emission through task_waits_event, gone with
// their task. wait_events: the events kept for a wait that starts late (the event window), matched
// through (owner_key, name, seq). owner_key as in task_counts ('N' without an owner, 'O' || owner),
// so a null owner is an equality the indexes answer.
const WAITS_MIGRATION = (t: Tables): string => `
  ALTER TABLE ${t.tasks} ADD COLUMN wait_mode TEXT CHECK (wait_mode IN ('memory', 'parked'));
  -- A parked task holds no lease: a write that parks and forgets to drop it fails loudly.
  ALTER TABLE ${t.tasks} ADD CHECK (wait_mode IS DISTINCT FROM 'parked' OR lease_owner IS NULL);
  DROP INDEX IF EXISTS ${t.schema}.tasks_queue;
  CREATE INDEX tasks_queue ON ${t.tasks} (created_at, id) WHERE status = 'working' AND lease_owner IS NULL AND wait_mode IS NULL;
  DROP INDEX IF EXISTS ${t.schema}.tasks_queue_owner;
  CREATE INDEX tasks_queue_owner ON ${t.tasks} (owner, created_at, id) WHERE status = 'working' AND lease_owner IS NULL AND wait_mode IS NULL;
  CREATE INDEX tasks_waiting ON ${t.tasks} (wait_mode) WHERE wait_mode IS NOT NULL;

  CREATE TABLE ${t.waits} (
    task_id    TEXT COLLATE "C" NOT NULL REFERENCES ${t.tasks} (id) ON DELETE CASCADE,
    key        TEXT NOT NULL,
    -- Registration order: breaks ties between waits registered in the same millisecond.
    seq        BIGINT GENERATED ALWAYS AS IDENTITY,
    kind       TEXT NOT NULL CHECK (kind IN ('timer', 'event')),
    owner      TEXT,
    owner_key  TEXT COLLATE "C" NOT NULL,
    event_name TEXT COLLATE "C",
    due_at     BIGINT,
    after_seq  BIGINT NOT NULL,
    since      BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (task_id, key)
  );
  CREATE INDEX task_waits_due ON ${t.waits} (due_at) WHERE due_at IS NOT NULL;
  CREATE INDEX task_waits_event ON ${t.waits} (owner_key, event_name) WHERE kind = 'event';

  CREATE TABLE ${t.waitEvents} (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    owner      TEXT,
    owner_key  TEXT COLLATE "C" NOT NULL,
    name       TEXT COLLATE "C" NOT NULL,
    payload    TEXT NOT NULL,
    created_at BIGINT NOT NULL
  );
  CREATE INDEX wait_events_match ON ${t.waitEvents} (owner_key, name, seq);
  CREATE INDEX wait_events_created ON ${t.waitEvents} (created_at);
  `;

/**
 * Schema history, oldest first; `migrations` records each version applied. Never edit an applied
 * entry: append a new one.
 *
 * Choices, for the record:
 * - JSON payloads (request, origin, outcome, progress, input params and answers) are TEXT, not
 *   JSONB: nothing queries inside them, TEXT round-trips exactly what was written (key order, and
 *   `\u0000`, which JSONB refuses), and the server does not parse them on every write.
 * - Times are BIGINT milliseconds since the epoch, as everywhere else in the toolkit.
 * - Ids are `COLLATE "C"`: the keyset order (createdAt, id) must be byte order, the same as the
 *   other stores', whatever collation the database defaults to.
 * - Input requests and the status timeline reference their task with ON DELETE CASCADE, so the
 *   expiry sweep is one DELETE and an input can never be queued for a task that is gone.
 */
const MIGRATIONS: ReadonlyArray<(t: Tables) => string> = [
  // 1: tasks with their leases, input queues, status timelines, and store-wide secrets.
  (t) => `
  CREATE TABLE ${t.tasks} (
    id               TEXT COLLATE "C" PRIMARY KEY,
    owner            TEXT,
    method           TEXT NOT NULL,
    name             TEXT NOT NULL,
    request          TEXT NOT NULL,
    origin           TEXT NOT NULL,
    status           TEXT NOT NULL
                     CHECK (status IN ('working', 'input_required', 'completed', 'failed', 'cancelled')),
    status_message   TEXT,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL,
    ttl_ms           BIGINT,
    expires_at       BIGINT,
    poll_interval_ms BIGINT,
    retryable        BOOLEAN NOT NULL,
    outcome          TEXT,
    progress         TEXT,
    -- The worker running the task and until when; NULL while queued and once terminal.
    lease_owner      TEXT,
    lease_expires_at BIGINT,
    -- How many times a worker claimed (started) the task.
    attempts         INT NOT NULL DEFAULT 0,
    CHECK ((lease_owner IS NULL) = (lease_expires_at IS NULL)),
    -- Only live tasks hold leases: a terminal write that forgot to drop one fails loudly.
    CHECK (lease_owner IS NULL OR status IN ('working', 'input_required'))
  );
  -- tasks/list: keyset walk per owner.
  CREATE INDEX tasks_owner_created ON ${t.tasks} (owner, created_at, id);
  -- The operator's view, newest first across owners.
  CREATE INDEX tasks_created ON ${t.tasks} (created_at, id);
  -- TTL sweeps; unlimited tasks never need to be looked at.
  CREATE INDEX tasks_expires ON ${t.tasks} (expires_at, id) WHERE expires_at IS NOT NULL;
  -- Recovery and per-owner concurrency limits only ever look at the (few) live tasks.
  CREATE INDEX tasks_active ON ${t.tasks} (owner, status) WHERE status IN ('working', 'input_required');
  -- The work queue: claims walk the unclaimed working tasks oldest first.
  CREATE INDEX tasks_queue ON ${t.tasks} (created_at, id) WHERE status = 'working' AND lease_owner IS NULL;
  -- The reaper: leases by deadline.
  CREATE INDEX tasks_leases ON ${t.tasks} (lease_expires_at, id) WHERE lease_owner IS NOT NULL;

  CREATE TABLE ${t.inputs} (
    task_id    TEXT COLLATE "C" NOT NULL REFERENCES ${t.tasks} (id) ON DELETE CASCADE,
    id         TEXT NOT NULL,
    -- Queue order: breaks ties between requests queued in the same millisecond.
    seq        BIGINT GENERATED ALWAYS AS IDENTITY,
    method     TEXT NOT NULL,
    params     TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    answer     TEXT,
    PRIMARY KEY (task_id, id)
  );

  CREATE TABLE ${t.history} (
    task_id        TEXT COLLATE "C" NOT NULL REFERENCES ${t.tasks} (id) ON DELETE CASCADE,
    seq            BIGINT GENERATED ALWAYS AS IDENTITY,
    status         TEXT NOT NULL,
    status_message TEXT,
    at             BIGINT NOT NULL,
    PRIMARY KEY (task_id, seq)
  );

  CREATE TABLE ${t.meta} (
    key   TEXT PRIMARY KEY,
    value BYTEA NOT NULL
  );
  `,
  // 2: cluster events too large for a NOTIFY payload (a requestor's long answer to a sampling or
  // elicitation request, POSTed to another node than the one that asked): the row travels, the
  // NOTIFY names it. Rows are deleted once old (the event bus prunes as it writes).
  (t) => `
  CREATE TABLE ${t.events} (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    payload    TEXT NOT NULL,
    created_at BIGINT NOT NULL
  );
  `,
  // Durable execution: the checkpointed results of handlers' steps (docs/durable-execution.md).
  // The first write of a (task, name) wins (INSERT … ON CONFLICT DO NOTHING); they go with their task.
  (t) => `
  CREATE TABLE ${t.checkpoints} (
    task_id    TEXT COLLATE "C" NOT NULL REFERENCES ${t.tasks} (id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    -- Insertion order, for listing (several steps may end in one millisecond).
    seq        BIGINT GENERATED ALWAYS AS IDENTITY,
    value      TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (task_id, name)
  );
  `,
  // Streamable HTTP's SSE events, kept for Last-Event-ID resumption on any node
  // (stream-event-store.ts). The identity is the event id: it only grows.
  (t) => `
  CREATE TABLE ${t.streamEvents} (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_key TEXT COLLATE "C" NOT NULL,
    stream_id   TEXT COLLATE "C" NOT NULL,
    message     TEXT NOT NULL,
    created_at  BIGINT NOT NULL
  );
  CREATE INDEX ON ${t.streamEvents} (session_key, stream_id, id);
  CREATE INDEX ON ${t.streamEvents} (created_at);
  `,
  COUNTS_MIGRATION,
  // The operator's view of the cluster (cluster-view.ts): each worker's row, refreshed by its
  // heartbeat, and when a lease was taken (NULL on leases taken by nodes from before).
  (t) => `
  CREATE TABLE ${t.workers} (
    worker_id    TEXT COLLATE "C" PRIMARY KEY,
    started_at   BIGINT NOT NULL,
    heartbeat_at BIGINT NOT NULL,
    concurrency  INT NOT NULL,
    lease_ms     BIGINT NOT NULL
  );
  ALTER TABLE ${t.tasks} ADD COLUMN leased_at BIGINT;
  `,
  CLAIM_GENERATION_MIGRATION,
  KEYS_MIGRATION,
  QUEUE_MIGRATION,
  RETENTION_MIGRATION,
  WAITS_MIGRATION,
  OUTBOX_MIGRATION,
  TOOL_PAUSES_MIGRATION,
  // Which cluster worker held the task when a timeline entry was written (the run's node, for
  // the operator's timeline): NULL for entries no worker wrote or held the task for.
  (t) => `ALTER TABLE ${t.history} ADD COLUMN node TEXT;`,
  OUTBOX_LEASED_WRITES_MIGRATION,
  OUTBOX_ROUTE_LOOP_MIGRATION,
];

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** The version that adds durable waits (for tests of upgrades across it). */
export const WAITS_VERSION = MIGRATIONS.indexOf(WAITS_MIGRATION) + 1;

/** The version that adds the kept counts per (owner, tool, status) (for tests of its backfill). */
export const COUNTS_VERSION = MIGRATIONS.indexOf(COUNTS_MIGRATION) + 1;

/** Advisory lock class of the migration lock ("mcpt"); the object id is a hash of the schema name. */
export const LOCK_CLASS = 0x6d637074;

/**
 * Brings the store's schema up to {@link SCHEMA_VERSION}, creating the PostgreSQL schema if it does
 * not exist. Returns the versions applied (empty when the schema was up to date).
 *
 * @throws Error when the schema was written by a newer version of this code.
 */
export async function migrate(
  pool: pg.Pool,
  tables: Tables,
  schemaName: string,
  now: () => number,
  target: number = SCHEMA_VERSION,
): Promise<number[]> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    // The pool's lock and statement timeouts are for requests: a node waits for another's migration
    // (the advisory lock) and a migration of a large table runs for as long as they take.
    await client.query("SET LOCAL lock_timeout = 0; SET LOCAL statement_timeout = 0");
    await client.query("SELECT pg_advisory_xact_lock($1::int, hashtext($2))", [LOCK_CLASS, schemaName]);
    // CREATE SCHEMA IF NOT EXISTS still needs the CREATE privilege on the database, which a role
    // given a schema made by an administrator may lack: only ask for it when the schema is missing.
    const found = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schemaName]);
    if (found.rowCount === 0) await client.query(`CREATE SCHEMA IF NOT EXISTS ${tables.schema}`);
    await client.query(`
      CREATE TABLE IF NOT EXISTS ${tables.migrations} (
        version    INT PRIMARY KEY,
        applied_at BIGINT NOT NULL
      )`);
    const current = await client.query<{ version: number }>(`SELECT COALESCE(max(version), 0) AS version FROM ${tables.migrations}`);
    const version = current.rows[0]?.version ?? 0;
    if (version > SCHEMA_VERSION) {
      throw new Error(`task store schema version ${version} is newer than this build supports (${SCHEMA_VERSION})`);
    }
    const applied: number[] = [];
    // `target` below SCHEMA_VERSION: for tests of upgrades from an older schema.
    const goal = Math.min(Math.max(0, Math.floor(target)), SCHEMA_VERSION);
    for (let next = version + 1; next <= goal; next++) {
      const migration = MIGRATIONS[next - 1];
      if (migration === undefined) break;
      await client.query(migration(tables));
      await client.query(`INSERT INTO ${tables.migrations} (version, applied_at) VALUES ($1, $2)`, [next, now()]);
      applied.push(next);
    }
    await client.query("COMMIT");
    client.release();
    return applied;
  } catch (error) {
    // A connection whose transaction could not be rolled back must not go back to the pool.
    await client.query("ROLLBACK").then(
      () => client.release(),
      (rollbackError: unknown) => client.release(rollbackError instanceof Error ? rollbackError : true),
    );
    throw error;
  }
}
