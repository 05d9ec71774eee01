import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import type pg from "pg";
import type { ListPosition } from "../../core/cursor.js";
import { RpcCode } from "../../core/errors.js";
import { pause } from "../../core/pause.js";
import { isTransientRollback } from "../../core/storage-condition.js";
import { canTransition, isTerminal, type TaskStatus } from "../../core/task-status.js";
import { expiresAt, type InputRequest, type NewTask, type StatusChange, type TaskOutcome, type TaskRecord } from "../../core/task.js";
import type { ClusterStore } from "../lease-store.js";
import { checkpointStatements } from "./checkpoint-statements.js";
import { inputStatements } from "./input-statements.js";
import { leaseStatements } from "./lease-statements.js";
import { workerStatements } from "./worker-statements.js";
import { NO_CAPS, type ClaimCaps, type QueueDepth } from "../run-queue.js";
import type { ClusterView, WorkerBeat } from "../cluster-view.js";
import { metaStatements, SECRET_KEY } from "./meta-statements.js";
import { statisticsUpkeep } from "./statistics-upkeep.js";
import {
  inputFromRow,
  statusChangeFromRow,
  taskFromRow,
  toJson,
  type HistoryRow,
  type InputRow,
  type HeldLeaseRow,
  type ClaimedTaskRow,
  type ExpiredLeaseRow,
  type TaskRow,
  type WorkerRow,
} from "./rows.js";
import { migrate } from "./schema.js";
import { postgresOutbox, WRITER_LEASE_SETTING, WRITER_OWNER_SETTING } from "./outbox-statements.js";
import { postgresToolPauses } from "./tool-pause-statements.js";
import type { ToolPauseStore } from "../tool-pause-store.js";
import type { OutboxStore } from "../outbox-store.js";
import { tablesOf, type Statement } from "./sql.js";
import { boundText } from "./text-values.js";
import { coalescer } from "./coalescer.js";
import { sweepStatements } from "./sweep-statements.js";
import { postgresStreamEvents } from "./stream-event-statements.js";
import type { Logger } from "../../core/logger.js";
import { taskStatements } from "./task-statements.js";
import { viewStatements } from "./view-statements.js";
import type { Claim, ClaimedTask } from "../claim.js";
import {
  checkTransitionPatch,
  claimLostError,
  countsFromTotals,
  duplicateInputError,
  duplicateTaskError,
  ownerKey,
  unknownTaskError,
  wholeLimit,
  zeroStatusCounts,
} from "../store-rules.js";
import type { StoreNotify } from "../../core/store-notify.js";
import type {
  AnnotatePatch,
  ExpiredBatch,
  KeyedCreation,
  OwnerScope,
  RetentionRules,
  StoredKey,
  TaskFilter,
  TransitionPatch,
} from "../task-store.js";
import type { TaskKey } from "../../core/idempotency.js";
import { keyStatements } from "./key-statements.js";
import type { Checkpoint, CheckpointStore } from "../checkpoint-store.js";
import { checkpointFromRow, type CheckpointRow } from "../sql/rows.js";
import type { WaitStore } from "../wait-store.js";
import { postgresWaits, type Query } from "./postgres-waits.js";

/** The pg driver, loaded on first use: a server on SQLite never pays for loading it at start. */
const requireCjs = createRequire(import.meta.url);
let driver: typeof pg | undefined;
function pgDriver(): typeof pg {
  return (driver ??= requireCjs("pg") as typeof pg);
}

/** Options of {@link postgresStore}: its schema, pool size, logger, and lock and statement timeouts. */
export interface PostgresStoreOptions {
  /**
   * PostgreSQL schema holding the tables; created if missing. A plain lower-case identifier
   * (letters, digits, underscores). Default "mcp_tasks". Nodes of one cluster must use the same.
   */
  schema?: string;
  /** Most connections the store opens. Default 10. */
  poolSize?: number;
  /** Reports migrations and connections that fail while idle. Default: silent. */
  logger?: Pick<Logger, "info" | "warn">;
  /**
   * Longest a statement of the store waits for a lock another client holds (PostgreSQL's
   * `lock_timeout` on the pool's connections), ms. Past it the statement fails and the request is
   * answered with the retryable store-busy error instead of waiting for as long as the lock is
   * held. Default 2000; 0 leaves the server's (or the role's) setting. A `lock_timeout` parameter
   * of the connection string wins. Migrations wait for as long as they need.
   */
  lockTimeoutMs?: number;
  /**
   * Longest a statement of the store runs (PostgreSQL's `statement_timeout`), ms: the same, for a
   * statement slowed by anything else. Default 10000; 0 leaves the server's (or the role's) setting. A
   * `statement_timeout` parameter of the connection string wins. Migrations are not cut short.
   */
  statementTimeoutMs?: number;
}

/** {@link PostgresStoreOptions.lockTimeoutMs}'s default. */
export const DEFAULT_LOCK_TIMEOUT_MS = 2_000;
/** {@link PostgresStoreOptions.statementTimeoutMs}'s default. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 10_000;

/** How long the row of a worker that stopped beating is kept (it is not shown meanwhile): an hour. */
const FORGET_WORKERS_AFTER_MS = 60 * 60 * 1000;

/** The default schema of {@link postgresStore}. */
export const DEFAULT_POSTGRES_SCHEMA = "mcp_tasks";

/** A {@link ClusterStore} on PostgreSQL, with the migration step exposed for a fail-fast start. */
export interface PostgresStore extends ClusterStore, CheckpointStore, WaitStore, OutboxStore, ToolPauseStore {
  /** The PostgreSQL schema the store's tables live in. */
  readonly schema: string;
  /**
   * Brings the schema up to date now (otherwise it happens on first use). Resolves at once when
   * done before; a failed attempt is retried by the next call or operation.
   */
  migrate(): Promise<void>;
}

/**
 * The parameters of the transition statement: id, sources, to, now, keepMessage, statusMessage,
 * outcome, terminal, claim owner, claim generation.
 */
type TransitionValues = [
  string,
  string[],
  TaskStatus,
  number,
  boolean,
  string | null,
  string | null,
  boolean,
  string | null,
  number | null,
];

/** A claim as the fence parameters of a statement (owner, generation); nulls for a write that names none. */
function fence(claim: Claim | undefined): [string | null, number | null] {
  return claim === undefined ? [null, null] : [claim.workerId, claim.generation];
}

/** One status change for the coalescer: its statement's parameters, and a NOTIFY to send with it. */
interface TransitionCall {
  values: TransitionValues;
  notify: StoreNotify | undefined;
}

/** The parameters of {@link taskStatements}' insert, in order. */
function insertValues(task: NewTask): unknown[] {
  return [
    task.id,
    task.owner,
    task.method,
    task.name,
    toJson(task.request),
    toJson(task.origin),
    task.createdAt,
    task.ttlMs,
    expiresAt(task.createdAt, task.ttlMs),
    task.pollIntervalMs,
    task.retryable,
  ];
}

/** What a re-run does to the input requests of the lost run (they will never be read). */
const SUPERSEDED: TaskOutcome = { kind: "error", error: { code: RpcCode.InternalError, message: "Superseded: the task was re-run" } };

const FOREIGN_KEY_VIOLATION = "23503";

/** A statement rolled back by a deadlock or a serialization failure is run this many times in all. */
const TRANSIENT_ATTEMPTS = 3;

/**
 * The SET statements of a pool connection's lock and statement timeouts: each the option, or its
 * default; none for 0 (the server's own setting) or when the connection string names it. Null
 * when there is nothing to set.
 */
function timeoutSettings(connectionString: string, options: PostgresStoreOptions): string | null {
  let named: URLSearchParams;
  try {
    named = new URL(connectionString).searchParams;
  } catch {
    named = new URLSearchParams();
  }
  const settings: string[] = [];
  for (const [name, option, fallback] of [
    ["lock_timeout", options.lockTimeoutMs, DEFAULT_LOCK_TIMEOUT_MS],
    ["statement_timeout", options.statementTimeoutMs, DEFAULT_STATEMENT_TIMEOUT_MS],
  ] as const) {
    const ms = Math.floor(option ?? fallback);
    if (ms > 0 && !named.has(name)) settings.push(`SET ${name} = ${ms}`);
  }
  return settings.length === 0 ? null : settings.join("; ");
}

/**
 * int8 (BIGINT, count(*)) as a JS number rather than pg's default string: every such value here is
 * a millisecond time, a duration or a count, far below 2^53. Set per pool, never globally, so other
 * users of `pg` in the process keep their parsers.
 */
function storeTypes(): pg.CustomTypesConfig {
  const types = new (pgDriver().TypeOverrides)();
  types.setTypeParser(pgDriver().types.builtins.INT8, (value: string) => Number(value));
  return types;
}

/** A task as a claim returned it, with its claim (the fence of the run's writes). */
function claimedFromRow(row: ClaimedTaskRow): ClaimedTask {
  return {
    ...taskFromRow(row),
    attempt: row.attempts,
    claim: { workerId: row.lease_owner, generation: row.claim_generation, attempt: row.attempts },
  };
}

/** Names the writing process's sender in a connection's session settings (its values: the two settings' names and values). */
const NAME_WRITER = "SELECT set_config($1, $2, false), set_config($3, $4, false)";

/**
 * A durable {@link ClusterStore} on PostgreSQL, shared by every node of a cluster: the same
 * `TaskStore` contract as the SQLite store (checked by the same suite), plus leases for
 * distributing work to worker processes.
 *
 * - Tables live in one schema (`options.schema`, default "mcp_tasks"), created and migrated on
 *   first use under a transaction-scoped advisory lock, so any number of nodes may start at once.
 * - Every status change is one compare-and-set statement (`UPDATE … WHERE status = ANY(…)`,
 *   narrowed by the lifecycle table) that also appends the timeline entry and, for a terminal
 *   move, drops the task's lease (T-LIFE-3, T-CANCEL-4).
 * - Claims use `FOR UPDATE SKIP LOCKED`: concurrent workers never get the same task and never
 *   wait for each other.
 *
 * Construction opens nothing; connections are made on first use.
 */
export function postgresStore(connectionString: string, options: PostgresStoreOptions = {}): PostgresStore {
  const schemaName = options.schema ?? DEFAULT_POSTGRES_SCHEMA;
  const tables = tablesOf(schemaName);
  const poolSize = Math.max(1, Math.floor(options.poolSize ?? 10));
  const logger = options.logger;
  const pool = new (pgDriver().Pool)({
    connectionString,
    max: poolSize,
    types: storeTypes(),
    keepAlive: true,
    connectionTimeoutMillis: 10_000,
    application_name: "mcp-tasks",
  });
  // Set on each new connection before its first statement, rather than as startup parameters,
  // which a pooler such as PgBouncer refuses unless told to ignore them. The connection string's
  // own `lock_timeout` / `statement_timeout` (sent at startup by the driver) are left to win.
  const sessionSettings = timeoutSettings(connectionString, options);
  if (sessionSettings !== null) {
    pool.on("connect", (client) => {
      client
        .query(sessionSettings)
        .catch((err: unknown) => logger?.warn({ err }, "task store: could not set the connection's lock and statement timeouts"));
    });
  }
  // The sender the outbox rows this store writes are leased to (OutboxStore.leaseWrites): named in
  // each connection's session settings, which the outbox trigger reads; set on a connection before
  // the first statement it runs after a change.
  let writer: { values: string[]; version: number } | null = null;
  const writerOf = new WeakMap<pg.PoolClient, number>();
  const nameWriter = async (client: pg.PoolClient): Promise<void> => {
    if (writer === null || writerOf.get(client) === writer.version) return;
    const { values, version } = writer;
    await client.query(NAME_WRITER, values);
    writerOf.set(client, version);
  };
  let writerVersion = 0;
  const leaseWrites: OutboxStore["leaseWrites"] = (lease) => {
    const owner = lease === null ? "" : lease.owner;
    const leaseMs = lease === null ? "" : String(Math.max(0, Math.floor(lease.leaseMs)));
    writer = { values: [WRITER_OWNER_SETTING, owner, WRITER_LEASE_SETTING, leaseMs], version: ++writerVersion };
  };
  // An idle connection that breaks (a server restart) is dropped by the pool; unhandled, the
  // 'error' event would take the process down.
  pool.on("error", (err) => logger?.warn({ err }, "task store: an idle PostgreSQL connection failed"));

  const tasks = taskStatements(tables);
  const inputs = inputStatements(tables);
  const checkpoints = checkpointStatements(tables);
  const sweeps = sweepStatements(tables);
  const leases = leaseStatements(tables);
  const workers = workerStatements(tables);
  const meta = metaStatements(tables);
  const keys = keyStatements(tables);
  const views = viewStatements(tables);
  const upkeep = statisticsUpkeep(pool, tables, logger);

  let closed = false;
  let migrated: Promise<void> | null = null;
  let secret: Buffer | null = null;

  const ready = (): Promise<void> => {
    if (closed) return Promise.reject(new Error("postgres task store is closed"));
    migrated ??= migrate(pool, tables, schemaName, Date.now).then(
      (applied) => {
        if (applied.length > 0) logger?.info({ schema: schemaName, versions: applied }, "task store: migrated the PostgreSQL schema");
      },
      (error: unknown) => {
        migrated = null; // the next operation tries again (the server may have been down)
        throw error;
      },
    );
    return migrated;
  };

  // Every statement here is one transaction of its own: one that a deadlock or a serialization
  // failure rolled back did nothing, and is run again at once (twice at most) before its error
  // reaches the caller (as the retryable store-busy condition, storage-condition.ts).
  const run = async <R extends pg.QueryResultRow>(query: Statement, values: unknown[]): Promise<pg.QueryResult<R>> => {
    await ready();
    const bound = boundText(values);
    const once = async (): Promise<pg.QueryResult<R>> => {
      if (writer === null) return pool.query<R>({ name: query.name, text: query.text, values: bound });
      const client = await pool.connect();
      // As pool.query does: a connection that fails while checked out is not reused (and its
      // 'error' event, unheard, would end the process).
      let broken: Error | null = null;
      const onError = (error: Error): void => {
        broken = error;
      };
      client.on("error", onError);
      try {
        await nameWriter(client);
        const result = await client.query<R>({ name: query.name, text: query.text, values: bound });
        client.removeListener("error", onError);
        client.release(broken ?? undefined);
        return result;
      } catch (error) {
        client.removeListener("error", onError);
        client.release(error instanceof Error ? error : true);
        throw error;
      }
    };
    for (let attempt = 1; ; attempt++) {
      try {
        return await once();
      } catch (error) {
        if (attempt >= TRANSIENT_ATTEMPTS || !isTransientRollback(error)) throw error;
        await pause(Math.random() * 20 * attempt);
      }
    }
  };
  const rows = async <R extends pg.QueryResultRow>(query: Statement, values: unknown[]): Promise<R[]> => (await run<R>(query, values)).rows;
  // Statements that must see each other's effects under one lock (durable waits): one transaction
  // on one connection, run again whole (twice at most) when a deadlock or a serialization failure
  // rolled it back, as a single statement is.
  const transaction = async <T>(work: (query: Query) => Promise<T>): Promise<T> => {
    await ready();
    for (let attempt = 1; ; attempt++) {
      const client = await pool.connect();
      try {
        await nameWriter(client);
        await client.query("BEGIN");
        const result = await work(
          async <R>(query: Statement, values: unknown[]) =>
            (await client.query({ name: query.name, text: query.text, values: boundText(values) })).rows as R[],
        );
        await client.query("COMMIT");
        client.release();
        return result;
      } catch (error) {
        // A connection whose transaction could not be rolled back must not go back to the pool.
        await client.query("ROLLBACK").then(
          () => client.release(),
          (rollbackError: unknown) => client.release(rollbackError instanceof Error ? rollbackError : true),
        );
        if (attempt >= TRANSIENT_ATTEMPTS || !isTransientRollback(error)) throw error;
        await pause(Math.random() * 20 * attempt);
      }
    }
  };
  const count = async (query: Statement, values: unknown[]): Promise<number> => (await rows<{ n: number }>(query, values))[0]?.n ?? 0;

  // The count deltas (schema.ts, migration 3) are folded into the compacted counts at most once a
  // second, by whichever read or sweep comes first: a read sums at most a second's worth of
  // deltas written meanwhile (or those since the last read, on a store nobody reads).
  const COMPACT_EVERY_MS = 1000;
  const VACUUM_AFTER_DELTAS = 10_000;
  let compactedAt = 0;
  let compacting: Promise<unknown> | null = null;
  const compactCounts = async (): Promise<void> => {
    if (compacting === null && Date.now() - compactedAt >= COMPACT_EVERY_MS) {
      compactedAt = Date.now();
      compacting = count(views.compactCounts, [])
        .then(async (folded) => {
          // A burst (a bulk load, a long time without reads) leaves a heap of dead delta rows that
          // every read would scan until autovacuum gets to it: reclaim it now. Best effort.
          if (folded >= VACUUM_AFTER_DELTAS) await pool.query(views.vacuumCountDeltas.text).catch(() => undefined);
        })
        .finally(() => {
          compacting = null;
        });
    }
    await compacting;
  };

  // The statements every task goes through, batched under load (coalescer.ts). A batch of one
  // keeps its single-row statement on purpose: the array form costs more for one row (measured
  // with npm run bench:cluster, three runs each: cross-node wake-up p50 3.9–4.5 ms with the
  // single-row statements, 5.0–5.9 ms without; throughput about 10 % lower).
  // A NOTIFY given with a write goes out from its statement (channelOf: the batch's one channel).
  const channelOf = (notifies: ReadonlyArray<StoreNotify | undefined>): string | undefined =>
    notifies.find((n) => n !== undefined)?.channel;
  const insertTask = coalescer<{ task: NewTask; notify: StoreNotify | undefined }, TaskRow | undefined>(async (calls) => {
    const batch = calls.map((call) => call.task);
    const channel = channelOf(calls.map((call) => call.notify));
    if (batch.length === 1) {
      const notify = calls[0]!.notify;
      return notify === undefined
        ? rows<TaskRow>(tasks.insert, insertValues(batch[0]!))
        : rows<TaskRow>(tasks.insertNotify, [...insertValues(batch[0]!), notify.channel, notify.payload]);
    }
    const columns = batch.map(insertValues);
    const arrays = columns[0]!.map((_, c) => columns.map((values) => values[c]));
    const created = await (channel === undefined
      ? rows<TaskRow>(tasks.insertMany, arrays)
      : rows<TaskRow>(tasks.insertManyNotify, [...arrays, channel, calls.map((call) => call.notify?.payload ?? null)]));
    // Within a batch an id may repeat: only its first occurrence was written.
    const byId = new Map(created.map((row) => [row.id, row]));
    return batch.map((task) => {
      const row = byId.get(task.id);
      byId.delete(task.id);
      return row;
    });
  });
  // A worker's outcome writes (and any other status change), batched the same way.
  const moveTask = coalescer<TransitionCall, TaskRow | undefined>(async function moveBatch(batch): Promise<Array<TaskRow | undefined>> {
    if (batch.length === 1) {
      const { values, notify } = batch[0]!;
      return notify === undefined
        ? rows<TaskRow>(tasks.transition, values)
        : rows<TaskRow>(tasks.transitionNotify, [...values, notify.channel, notify.payload]);
    }
    // One UPDATE changes a row once: a task's second change in a batch waits for the next
    // statement, so it is judged against what the first one left, as if they had gone one by one.
    const seen = new Set<string>();
    const first: TransitionCall[] = [];
    const later: TransitionCall[] = [];
    for (const call of batch) {
      (seen.has(call.values[0]) ? later : first).push(call);
      seen.add(call.values[0]);
    }
    const arrays = [
      first.map(({ values: [id] }) => id),
      first.map(({ values: [, sources] }) => sources.join(",")),
      ...[2, 3, 4, 5, 6, 7, 8, 9].map((c) => first.map(({ values }) => values[c])),
    ];
    const channel = channelOf(first.map((call) => call.notify));
    const moved = await (channel === undefined
      ? rows<TaskRow>(tasks.transitionMany, arrays)
      : rows<TaskRow>(tasks.transitionManyNotify, [...arrays, channel, first.map((call) => call.notify?.payload ?? null)]));
    const byId = new Map(moved.map((row) => [row.id, row]));
    const results = new Map(first.map((call) => [call, byId.get(boundText([call.values[0]])[0] as string)]));
    if (later.length > 0) (await moveBatch(later)).forEach((row, i) => results.set(later[i]!, row));
    return batch.map((call) => results.get(call));
  });
  // Every task's result is marked fetched once: next to its creation, the most frequent write.
  const markFetched = coalescer<{ id: string; now: number }, boolean>(async (calls) => {
    if (calls.length === 1) return [((await run(sweeps.markFetched, [calls[0]!.now, calls[0]!.id])).rowCount ?? 0) > 0];
    const marked = new Set(
      (await rows<{ id: string }>(sweeps.markFetchedMany, [calls.map((call) => call.id), calls.map((call) => call.now)])).map(
        (row) => row.id,
      ),
    );
    // The same task twice in one batch: the first call is the first fetch, as it would be one by one.
    return calls.map((call) => marked.delete(boundText([call.id])[0] as string));
  });
  const readTasks = coalescer<string, TaskRow | undefined>(async (ids) => {
    if (ids.length === 1) return rows<TaskRow>(tasks.get, ids);
    const byId = new Map((await rows<TaskRow>(tasks.getMany, [ids])).map((row) => [row.id, row]));
    return ids.map((id) => byId.get(boundText([id])[0] as string));
  });

  const waits = postgresWaits(tables, {
    rows: async <R>(query: Statement, values: unknown[]) => (await run(query, values)).rows as R[],
    transaction,
  });

  return {
    ...waits,
    // Webhook events: rows written by a trigger inside each status change (outbox-statements.ts).
    ...postgresOutbox(tables, rows, leaseWrites),
    // Paused tools: the claim statement leaves their queued tasks alone (tool-pause-statements.ts).
    ...postgresToolPauses(tables, rows),
    schema: schemaName,

    migrate: ready,

    sendsNotify: true,

    async createKeyed(task: NewTask, key: TaskKey, notify?: StoreNotify): Promise<KeyedCreation> {
      // Not batched: the claim of a key must see every other claim committed before it.
      const ownerKey = ownerKeyOf(task.owner);
      const values = [...insertValues(task), ownerKey, key.key, key.fingerprint];
      const [row] = await (notify === undefined
        ? rows<TaskRow>(keys.insert, values)
        : rows<TaskRow>(keys.insertNotify, [...values, notify.channel, notify.payload]));
      if (row !== undefined) return { created: true, task: taskFromRow(row) };
      // The claim waited for the key's first writer to commit: this statement sees its task.
      const [found] = await rows<TaskRow & { key_fingerprint: string }>(keys.find, [ownerKey, key.key]);
      if (found === undefined) throw duplicateTaskError(task.id);
      return { created: false, task: taskFromRow(found), fingerprint: found.key_fingerprint };
    },

    async findKey(owner: string | null, key: string): Promise<StoredKey | null> {
      const [found] = await rows<TaskRow & { key_fingerprint: string }>(keys.find, [ownerKeyOf(owner), key]);
      return found === undefined ? null : { task: taskFromRow(found), fingerprint: found.key_fingerprint };
    },

    async releaseKey(owner: string | null, key: string, taskId: string): Promise<boolean> {
      return ((await run(keys.release, [ownerKeyOf(owner), key, taskId])).rowCount ?? 0) === 1;
    },

    async create(task: NewTask, notify?: StoreNotify): Promise<TaskRecord> {
      const row = await insertTask({ task, notify });
      if (row === undefined) throw duplicateTaskError(task.id);
      return taskFromRow(row);
    },

    async get(id: string, scope: OwnerScope): Promise<TaskRecord | null> {
      const row = await readTasks(id);
      // A null owner matches exactly the tasks created without one (as IS NOT DISTINCT FROM); the
      // owner is compared as it was bound when the task was written (U+0000 replaced).
      if (row === undefined || (!("any" in scope) && row.owner !== boundText([scope.owner])[0])) return null;
      return taskFromRow(row);
    },

    async list(owner: string | null, after: ListPosition | null, limit: number): Promise<TaskRecord[]> {
      const n = wholeLimit(limit);
      if (n === 0) return [];
      let found: TaskRow[];
      if (after === null) {
        found = owner === null ? await rows(tasks.listFirstAnonymous, [n]) : await rows(tasks.listFirst, [owner, n]);
      } else {
        found =
          owner === null
            ? await rows(tasks.listAfterAnonymous, [after.createdAt, after.id, n])
            : await rows(tasks.listAfter, [owner, after.createdAt, after.id, n]);
      }
      return found.map(taskFromRow);
    },

    async search(filter: TaskFilter, after: ListPosition | null, limit: number): Promise<TaskRecord[]> {
      const n = wholeLimit(limit);
      if (n === 0) return [];
      const query = views.search(filter, after, n);
      await ready();
      return (await pool.query<TaskRow>(query.text, boundText(query.values))).rows.map(taskFromRow);
    },

    async countByStatus(filter: TaskFilter): Promise<Record<TaskStatus, number>> {
      const query = views.countByStatus(filter);
      await ready();
      if (countsFromTotals(filter)) await compactCounts();
      const counts = zeroStatusCounts();
      for (const row of (await pool.query<{ status: TaskStatus; n: number }>(query.text, boundText(query.values))).rows)
        counts[row.status] = row.n;
      return counts;
    },

    async history(taskId: string): Promise<StatusChange[]> {
      return (await rows<HistoryRow>(views.history, [taskId])).map(statusChangeFromRow);
    },

    async transition(id: string, from: readonly TaskStatus[], to: TaskStatus, patch: TransitionPatch): Promise<TaskRecord | null> {
      checkTransitionPatch(to, patch);
      // The lifecycle table has the last word even over a caller's `from`: an illegal move never reaches SQL.
      const sources = from.filter((status) => canTransition(status, to));
      if (sources.length === 0) {
        await ready(); // a closed store still says so
        return null;
      }
      const row = await moveTask({
        values: [
          id,
          sources,
          to,
          patch.now,
          patch.statusMessage === undefined,
          patch.statusMessage ?? null,
          patch.outcome === undefined ? null : toJson(patch.outcome),
          isTerminal(to),
          ...fence(patch.claim),
        ],
        notify: patch.notify,
      });
      return row === undefined ? null : taskFromRow(row);
    },

    async annotate(id: string, patch: AnnotatePatch): Promise<boolean> {
      const [row] = await rows<{ n: number }>(tasks.annotate, [
        id,
        patch.now,
        patch.statusMessage === undefined,
        patch.statusMessage ?? null,
        patch.progress === undefined ? null : toJson(patch.progress),
        ...fence(patch.claim),
        patch.timeline === true,
      ]);
      return row?.n === 1;
    },

    async enqueueInput(request: Omit<InputRequest, "answer">, claim?: Claim): Promise<void> {
      if (claim !== undefined) {
        const [row] = await rows<{ held: number; n: number }>(inputs.enqueueClaimed, [
          request.taskId,
          request.id,
          request.method,
          toJson(request.params),
          ...fence(claim),
        ]);
        if (row?.held !== 1) throw claimLostError(request.taskId);
        if (row.n !== 1) throw duplicateInputError(request.taskId, request.id);
        return;
      }
      let written: number | null;
      try {
        written = (await run(inputs.enqueue, [request.taskId, request.id, request.method, toJson(request.params), request.createdAt]))
          .rowCount;
      } catch (error) {
        if ((error as { code?: unknown }).code === FOREIGN_KEY_VIOLATION) throw unknownTaskError(request.taskId);
        throw error;
      }
      if (written !== 1) throw duplicateInputError(request.taskId, request.id);
    },

    async pendingInputs(taskId: string): Promise<InputRequest[]> {
      return (await rows<InputRow>(inputs.pending, [taskId])).map(inputFromRow);
    },

    async inputs(taskId: string): Promise<InputRequest[]> {
      return (await rows<InputRow>(inputs.all, [taskId])).map(inputFromRow);
    },

    async getInput(taskId: string, inputId: string): Promise<InputRequest | null> {
      const [row] = await rows<InputRow>(inputs.get, [taskId, inputId]);
      return row === undefined ? null : inputFromRow(row);
    },

    async answerInput(taskId: string, inputId: string, answer: TaskOutcome, claim?: Claim): Promise<boolean> {
      if (claim !== undefined) return (await run(inputs.answerClaimed, [toJson(answer), taskId, inputId, ...fence(claim)])).rowCount === 1;
      return (await run(inputs.answer, [toJson(answer), taskId, inputId])).rowCount === 1;
    },

    async saveCheckpoint(taskId: string, name: string, value: unknown, now: number, claim?: Claim): Promise<boolean> {
      if (claim !== undefined) return (await run(checkpoints.saveClaimed, [taskId, name, toJson(value), ...fence(claim)])).rowCount === 1;
      try {
        return (await run(checkpoints.save, [taskId, name, toJson(value), now])).rowCount === 1;
      } catch (error) {
        if ((error as { code?: unknown }).code === FOREIGN_KEY_VIOLATION) return false;
        throw error;
      }
    },

    async checkpoints(taskId: string): Promise<Checkpoint[]> {
      return (await rows<CheckpointRow>(checkpoints.all, [taskId])).map(checkpointFromRow);
    },

    async dropCheckpoints(taskId: string): Promise<number> {
      return (await run(checkpoints.drop, [taskId])).rowCount ?? 0;
    },

    async expiredActive(now: number, limit: number): Promise<TaskRecord[]> {
      const n = wholeLimit(limit);
      return n === 0 ? [] : (await rows<TaskRow>(sweeps.expiredActive, [now, n])).map(taskFromRow);
    },

    async deleteExpired(now: number, limit: number, rules: RetentionRules = {}): Promise<ExpiredBatch> {
      const n = wholeLimit(limit);
      if (n === 0) return { deleted: 0, unread: 0 };
      const rememberMs = rules.rememberExpiredMs ?? 0;
      const batch = (await rows<ExpiredBatch>(sweeps.deleteExpired, [now, n, rules.keepFinishedMs ?? 0, rememberMs]))[0] ?? {
        deleted: 0,
        unread: 0,
      };
      await run(sweeps.forgetExpired, [now - rememberMs, n]);
      await compactCounts();
      return batch;
    },

    async wasExpired(id: string, scope: OwnerScope): Promise<boolean> {
      const row = (await rows<{ owner: string | null }>(sweeps.wasExpired, [id]))[0];
      return row !== undefined && ("any" in scope || row.owner === scope.owner);
    },

    async markFetched(id: string, now: number): Promise<boolean> {
      return markFetched({ id, now });
    },

    async activeTasks(limit: number): Promise<TaskRecord[]> {
      const n = wholeLimit(limit);
      return n === 0 ? [] : (await rows<TaskRow>(sweeps.activeTasks, [n])).map(taskFromRow);
    },

    async countActive(owner: string | null): Promise<number> {
      await compactCounts();
      return count(sweeps.countActive, [ownerKey(owner)]);
    },

    async countStored(owner: string | null): Promise<number> {
      await compactCounts();
      return count(sweeps.countStored, [ownerKey(owner)]);
    },

    async secret(): Promise<Buffer> {
      await ready();
      if (secret === null) {
        // Insert-if-absent, then read back: whichever node wrote first, all read the same bytes.
        let [row] = await rows<{ value: Buffer }>(meta.read, [SECRET_KEY]);
        if (row === undefined) {
          await run(meta.insert, [SECRET_KEY, randomBytes(32)]);
          [row] = await rows<{ value: Buffer }>(meta.read, [SECRET_KEY]);
        }
        if (row === undefined) throw new Error("task store secret is missing after insert");
        // Never changes once written, so one read per store is enough.
        secret = row.value;
      }
      return Buffer.from(secret);
    },

    async claim(
      workerId: string,
      limit: number,
      leaseMs: number,
      now: number,
      names?: readonly string[],
      caps: ClaimCaps = NO_CAPS,
    ): Promise<ClaimedTask[]> {
      const n = wholeLimit(limit);
      if (n === 0 || names?.length === 0) return [];
      const capped = [JSON.stringify(caps.perName), caps.perOwner];
      const claimed =
        names === undefined
          ? await rows<ClaimedTaskRow>(leases.claim, [workerId, n, now, leaseMs, ...capped])
          : await rows<ClaimedTaskRow>(leases.claimNamed, [workerId, n, now, leaseMs, ...capped, [...names]]);
      // RETURNING follows no ORDER BY: restore the queue order.
      return claimed
        .sort((a, b) => (a.created_at !== b.created_at ? a.created_at - b.created_at : a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .map(claimedFromRow);
    },

    async heldLeases(workerId: string, now: number): Promise<ClaimedTask[]> {
      return (await rows<ClaimedTaskRow>(leases.heldLeases, [workerId, now])).map(claimedFromRow);
    },

    async renew(workerId: string, taskIds: readonly string[], leaseMs: number, now: number): Promise<string[]> {
      if (taskIds.length === 0) return [];
      const held = new Set((await rows<{ id: string }>(leases.renew, [workerId, [...taskIds], now, leaseMs])).map((row) => row.id));
      return taskIds.filter((id) => held.has(id));
    },

    async expiredLeases(
      now: number,
      limit: number,
    ): Promise<Array<{ task: TaskRecord; workerId: string; attempts: number; expiresAt: number }>> {
      const n = wholeLimit(limit);
      if (n === 0) return [];
      return (await rows<ExpiredLeaseRow>(leases.expiredLeases, [now, n])).map((row) => ({
        task: taskFromRow(row),
        workerId: row.lease_owner,
        attempts: row.attempts,
        expiresAt: row.lease_expires_at,
      }));
    },

    async requeue(
      taskId: string,
      workerId: string,
      maxAttempts: number,
      now: number,
      options: { keepInputs?: boolean } = {},
    ): Promise<boolean> {
      const max = Math.min(Math.floor(maxAttempts), 2 ** 31 - 1);
      if (!(max > 0)) return false; // also NaN
      return (await count(leases.requeue, [taskId, workerId, now, max, toJson(SUPERSEDED), options.keepInputs === true])) === 1;
    },

    async failExpired(
      taskId: string,
      workerId: string,
      now: number,
      statusMessage: string,
      outcome: TaskOutcome,
    ): Promise<TaskRecord | null> {
      const [row] = await rows<TaskRow>(leases.failExpired, [taskId, workerId, now, statusMessage, toJson(outcome)]);
      return row === undefined ? null : taskFromRow(row);
    },

    async release(taskId: string, claim: Claim): Promise<void> {
      await run(leases.release, [taskId, claim.workerId, claim.generation]);
    },

    async handBack(taskId: string, claim: Claim, now: number, statusMessage: string): Promise<TaskRecord | null> {
      const [row] = await rows<TaskRow>(leases.handBack, [taskId, claim.workerId, now, statusMessage, claim.generation]);
      return row === undefined ? null : taskFromRow(row);
    },

    async queueDepth(): Promise<number> {
      return count(leases.queueDepth, []);
    },

    async queuedSince(time: number, names?: readonly string[]): Promise<boolean> {
      const [row] =
        names === undefined
          ? await rows<{ waiting: boolean }>(leases.queuedSince, [time])
          : await rows<{ waiting: boolean }>(leases.queuedSinceNamed, [time, names]);
      return row?.waiting === true;
    },

    async queuedAhead(taskId: string): Promise<number | null> {
      const [row] = await rows<{ n: string | number }>(leases.queuedAhead, [taskId]);
      return row === undefined ? null : Number(row.n);
    },

    async countQueued(owner: string | null): Promise<number> {
      return owner === null ? count(leases.countQueuedAnonymous, []) : count(leases.countQueued, [owner]);
    },

    async queueDepths(): Promise<QueueDepth[]> {
      return (await rows<{ owner: string | null; name: string; n: number }>(leases.queueDepths, [])).map((row) => ({
        owner: row.owner,
        name: row.name,
        queued: row.n,
      }));
    },

    async heartbeat(worker: WorkerBeat, now: number): Promise<string[]> {
      const alive = (
        await rows<{ worker_id: string }>(workers.heartbeat, [
          worker.workerId,
          worker.startedAt,
          now,
          worker.concurrency,
          worker.leaseMs,
          now - FORGET_WORKERS_AFTER_MS,
        ])
      ).map((row) => row.worker_id);
      // Workers are what claims; their beat is where the statistics the claim is planned on are kept.
      await upkeep();
      return alive;
    },

    async retire(workerId: string): Promise<void> {
      await run(workers.retire, [workerId]);
    },

    async clusterView(now: number, options: { leaseLimit?: number } = {}): Promise<ClusterView> {
      const limit = wholeLimit(options.leaseLimit ?? 500);
      const [alive, held, queueDepth] = await Promise.all([
        rows<WorkerRow>(workers.alive, [now]),
        limit === 0 ? Promise.resolve([]) : rows<HeldLeaseRow>(workers.leases, [limit + 1]),
        count(leases.queueDepth, []),
      ]);
      return {
        workers: alive.map((w) => ({
          workerId: w.worker_id,
          startedAt: w.started_at,
          heartbeatAt: w.heartbeat_at,
          concurrency: w.concurrency,
          leaseMs: w.lease_ms,
          running: w.running,
        })),
        leases: held.slice(0, limit).map((l) => ({
          taskId: l.id,
          name: l.name,
          status: l.status,
          workerId: l.lease_owner,
          since: l.leased_at,
          expiresAt: l.lease_expires_at,
          attempts: l.attempts,
        })),
        leasesTruncated: held.length > limit,
        queueDepth,
      };
    },

    streamEvents: postgresStreamEvents(tables, run),

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      // Let a migration in flight finish (or fail) before its connection goes away.
      await migrated?.catch(() => {});
      await pool.end();
    },
  };
}

/** The owner as the key table holds it: a task without one has a key too (a NULL never conflicts). */
function ownerKeyOf(owner: string | null): string {
  return owner === null ? "N" : `O${owner}`;
}
