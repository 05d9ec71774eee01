/**
 * What every PostgreSQL statement module shares: the schema-qualified table names, the named
 * statement shape, and status sets as SQL literals.
 */
import { ACTIVE_STATUSES, TERMINAL_STATUSES } from "../../core/task-status.js";

/**
 * A statement the store runs with bound parameters (`$1`, `$2`, …), never with values spliced
 * into its text. Named, so each pooled connection parses and plans it once.
 */
export interface Statement {
  readonly name: string;
  readonly text: string;
}

/** The tables of one store, qualified with its (validated, quoted) schema. */
export interface Tables {
  readonly schema: string;
  readonly tasks: string;
  readonly inputs: string;
  readonly history: string;
  readonly meta: string;
  readonly migrations: string;
  /** Cluster events too large for a NOTIFY payload (see pgEventBus's `overflowTable`). */
  readonly events: string;
  /** Checkpointed step results (durable execution). */
  readonly checkpoints: string;
  /** Streamable HTTP's SSE events, for resumption (stream-event-statements.ts). */
  readonly streamEvents: string;
  /** Compacted counts per (owner key, tool, status). */
  readonly counts: string;
  /** Changes to those counts not yet folded in: +1/-1 rows, written by a trigger, summed on read. */
  readonly countDeltas: string;
  /** The cluster's workers and their heartbeats (worker-statements.ts). */
  readonly workers: string;
  /** Idempotency keys, one per (owner key, key), each naming its task (key-statements.ts). */
  readonly keys: string;
  /** Ids of tasks deleted at their retention, remembered for a while (sweep-statements.ts). */
  readonly expired: string;
  /** Registered timers and event waits of tasks (wait-statements.ts). */
  readonly waits: string;
  /** Events kept for waits that start late (the event window; wait-statements.ts). */
  readonly waitEvents: string;
}

/**
 * Schema names are spliced into SQL text (identifiers cannot be bound), so only plain lower-case
 * identifiers are accepted: nothing that quoting could change the meaning of, nothing in the
 * `pg_` namespace PostgreSQL reserves.
 */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export function isSchemaName(name: string): boolean {
  return SCHEMA_NAME.test(name) && !name.startsWith("pg_");
}

export function tablesOf(schemaName: string): Tables {
  if (!isSchemaName(schemaName)) {
    throw new Error(
      `Invalid PostgreSQL schema name "${schemaName}": use 1-63 lower-case letters, digits and underscores, not starting with a digit or pg_`,
    );
  }
  const schema = `"${schemaName}"`;
  return {
    schema,
    tasks: `${schema}.tasks`,
    inputs: `${schema}.task_inputs`,
    history: `${schema}.task_history`,
    meta: `${schema}.meta`,
    migrations: `${schema}.migrations`,
    events: `${schema}.events`,
    checkpoints: `${schema}.task_checkpoints`,
    streamEvents: `${schema}.stream_events`,
    counts: `${schema}.task_counts`,
    countDeltas: `${schema}.task_count_deltas`,
    workers: `${schema}.workers`,
    keys: `${schema}.task_keys`,
    expired: `${schema}.expired_tasks`,
    waits: `${schema}.task_waits`,
    waitEvents: `${schema}.wait_events`,
  };
}

/** Builds a named statement; the prefix keeps our names apart from anyone else's on a connection. */
export function statement(name: string, text: string): Statement {
  return { name: `mcp_tasks_${name}`, text };
}

function sqlList(values: readonly string[]): string {
  return `(${values.map((v) => `'${v.replaceAll("'", "''")}'`).join(", ")})`;
}

/**
 * Status sets inlined as literals (they are constants of `core`, not input): the planner only uses
 * a partial index whose predicate the query visibly implies, which a bound array never does.
 */
export const ACTIVE_SQL = sqlList(ACTIVE_STATUSES);
export const TERMINAL_SQL = sqlList(TERMINAL_STATUSES);

/**
 * The queue: unclaimed `working` tasks that do not wait (a parked task holds no lease and is not
 * queued). The predicate of the partial indexes tasks_queue and tasks_queue_owner.
 */
export const QUEUED_SQL = "status = 'working' AND lease_owner IS NULL AND wait_mode IS NULL";

/**
 * The task columns, listed rather than `*`: a connection's prepared statements keep their result
 * shape when a newer node adds a column during a rolling upgrade.
 */
const TASK_COLUMN_NAMES = [
  "id",
  "owner",
  "method",
  "name",
  "request",
  "origin",
  "status",
  "status_message",
  "created_at",
  "updated_at",
  "ttl_ms",
  "expires_at",
  "poll_interval_ms",
  "retryable",
  "outcome",
  "progress",
  "wait_mode",
] as const;

export const TASK_COLUMNS = TASK_COLUMN_NAMES.join(", ");

/** {@link TASK_COLUMNS} of a table alias (`t.id, t.owner, …`). */
export function taskColumnsOf(alias: string): string {
  return TASK_COLUMN_NAMES.map((column) => `${alias}.${column}`).join(", ");
}

export const INPUT_COLUMNS = "task_id, id, method, params, created_at, answer";

/**
 * The timeline CTE every status-writing statement ends with: one history row per task the
 * statement's `source` CTE returned, stamped with that row's `at` column, in the same statement
 * (so a status and its timeline entry are written together or not at all). `node` is the SQL
 * of the cluster worker that held the task then (a column of `source` or a parameter), if any.
 */
export function timelineOf(t: Tables, source: string, at: "created_at" | "updated_at", node = "NULL::text"): string {
  return `logged AS (
         INSERT INTO ${t.history} (task_id, status, status_message, at, node)
         SELECT id, status, status_message, ${at}, ${node} FROM ${source})`;
}

/** The columns a new task row is written with, in the order the insert statements give them. */
export const NEW_TASK_COLUMNS = `id, owner, method, name, request, origin, status, status_message,
                                 created_at, updated_at, ttl_ms, expires_at, poll_interval_ms, retryable`;

/**
 * The database's clock in epoch milliseconds, for stamping a worker's writes: whichever node's
 * clock is off, a task's updatedAt never goes back (they are written as GREATEST(updated_at, …)).
 */
export const DB_NOW_MS = "(extract(epoch FROM statement_timestamp()) * 1000)::bigint";

/**
 * The fence of a worker's write, over parameters `owner` (text, NULL for a write that names no
 * claim) and `generation` (int8): the claim must still be the task's current one. `alias` qualifies
 * the tasks table's columns.
 */
export function claimHeld(owner: string, generation: string, alias = ""): string {
  const c = alias === "" ? "" : `${alias}.`;
  return `(${owner}::text IS NULL OR (${c}lease_owner = ${owner}::text AND ${c}claim_generation = ${generation}::bigint))`;
}

/**
 * updated_at of a write that may name a claim: the database's clock when it does (a worker's),
 * the caller's time when it names none — never earlier than the task's updated_at already is,
 * whichever node's clock is behind.
 */
export function stampOf(owner: string, now: string, alias = ""): string {
  const c = alias === "" ? "" : `${alias}.`;
  return `GREATEST(${c}updated_at, CASE WHEN ${owner}::text IS NULL THEN ${now}::bigint ELSE ${DB_NOW_MS} END)`;
}

/**
 * A batch's array parameter as the planner should see it: `(SELECT $n::type[])`, a value it learns
 * only when the statement runs. A prepared statement is planned for its first five runs with the
 * bound values (custom plans), and from then on with one generic plan only if that plan does not
 * look dearer than theirs. Seen bare, a batch of three ids makes the custom plan look cheaper than
 * the generic one, which assumes ten, so PostgreSQL plans the statement anew on every run: that
 * planning cost as much again as running it (a lookup of four ids, 70–80 µs of server CPU against
 * 37.5–40 µs with the generic plan). Behind a sub-select both plans assume the same size, so the
 * generic plan, the same index lookups, is kept after five runs.
 */
export function boundLater(parameter: string, type: string): string {
  return `(SELECT ${parameter}::${type})`;
}

/**
 * The CTE `locked` that locks the tasks matching `where` (over the tasks table's own columns) one
 * after the other in the order of their ids, for a statement that writes several tasks. Every such
 * statement takes its rows' locks in this one order — a worker's lease renewal, its batched
 * outcome writes, a front's batched fetched_at marks — so two of them never wait for each other
 * in a circle (a deadlock, 40P01), whatever order their batches and plans would take. FOR NO KEY
 * UPDATE is the lock the UPDATE takes anyway: it lets a timeline row still be written beside it.
 */
export function lockedInOrder(t: Tables, where: string, columns = ""): string {
  return `locked AS (
         SELECT id${columns === "" ? "" : `, ${columns}`} FROM ${t.tasks} WHERE ${where}
         ORDER BY id
         FOR NO KEY UPDATE)`;
}
