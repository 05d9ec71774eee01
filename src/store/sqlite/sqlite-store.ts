import { mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, resolve } from "node:path";
import type { ListPosition } from "../../core/cursor.js";
import { canTransition, type TaskStatus } from "../../core/task-status.js";
import { expiresAt, type InputRequest, type NewTask, type StatusChange, type TaskOutcome, type TaskRecord } from "../../core/task.js";
import { prepareCheckpointStatements } from "./checkpoint-statements.js";
import { GroupCommit } from "./group-commit.js";
import { prepareInputStatements } from "./input-statements.js";
import { prepareKeyStatements } from "./key-statements.js";
import { prepareMetaStatements } from "./meta-statements.js";
import { inputFromRow, statusChangeFromRow, taskFromRow, toJson } from "./rows.js";
import { migrate } from "./schema.js";
import { prepareSweepStatements } from "./sweep-statements.js";
import { sqliteStreamEvents } from "./stream-event-statements.js";
import { prepareTaskStatements } from "./task-statements.js";
import { prepareViewStatements } from "./view-statements.js";
import type { Claim } from "../claim.js";
import {
  checkTransitionPatch,
  claimLostError,
  duplicateInputError,
  duplicateTaskError,
  ownerKey,
  unknownTaskError,
  wholeLimit,
  zeroStatusCounts,
} from "../store-rules.js";
import type {
  AnnotatePatch,
  ExpiredBatch,
  KeyedCreation,
  OwnerScope,
  RetentionRules,
  StoredKey,
  TaskFilter,
  TaskStore,
  TransitionPatch,
} from "../task-store.js";
import type { TaskKey } from "../../core/idempotency.js";
import type { Checkpoint, CheckpointStore } from "../checkpoint-store.js";
import { checkpointFromRow } from "../sql/rows.js";
import { StoreInUseError, type WriterLockStore } from "../writer-lock.js";
import { SqliteWriterLock } from "./writer-lock.js";
import { defaultSqliteDriver, openSqlite, type SqliteDatabase, type SqliteDriverName } from "./driver.js";
import { explainOpenFailure } from "./open-failure.js";
import { prepareQueueStatements } from "./queue-statements.js";
import type { ClaimCaps, QueueDepth, RunQueueStore } from "../run-queue.js";
import type { TaskRow } from "./rows.js";
import type { WaitStore } from "../wait-store.js";
import { sqliteWaits } from "./sqlite-waits.js";
import { sqliteOutbox } from "./outbox-statements.js";
import { sqliteToolPauses } from "./tool-pause-statements.js";
import type { ToolPauseStore } from "../tool-pause-store.js";
import type { OutboxStore } from "../outbox-store.js";

/**
 * The group-commit key of a claim. It names no task, so a lookup of one task does not flush the
 * claims queued in its turn: it reads the task as not yet started, as it would have a moment
 * before the claim, which is when the claim was asked for.
 */
const CLAIM_GROUP_KEY = "\u0000claim";

/** Options of {@link sqliteStore}. */
export interface SqliteStoreOptions {
  /** How long a write waits for another connection's lock before failing with SQLITE_BUSY. Default 5000. */
  busyTimeoutMs?: number;
  /**
   * The driver: better-sqlite3 (the default when installed; an optional peer dependency) or Node's
   * built-in `node:sqlite` (the default otherwise, where Node has it; no native addon).
   */
  driver?: SqliteDriverName;
}

/** Paths better-sqlite3 treats as non-file databases, for which no directory must be created. */
function isFilePath(path: string): boolean {
  return path !== "" && path !== ":memory:" && !path.startsWith("file:");
}

/**
 * A durable {@link TaskStore} in one SQLite file (WAL, synchronous=NORMAL), safe to share between
 * processes on one machine — but only one server may run tasks from it: a server's engine takes
 * the file's writer lock at start ({@link WriterLockStore}; a second server is refused with a
 * `StoreInUseError` naming the file), while other connections may read and write it freely. Creates the file, its missing parent directories and the schema on
 * first open; `":memory:"` gives a private, non-durable database.
 *
 * Every status change is a single compare-and-set `UPDATE … WHERE status IN (…)`, so concurrent
 * writers (other requests, other processes) can never move a terminal task (T-LIFE-3, T-CANCEL-4).
 */
export function sqliteStore(
  path: string,
  options: SqliteStoreOptions = {},
): TaskStore & CheckpointStore & WriterLockStore & RunQueueStore & WaitStore & OutboxStore & ToolPauseStore {
  if (isFilePath(path)) mkdirSync(dirname(resolve(path)), { recursive: true });
  const driver = options.driver ?? defaultSqliteDriver();
  let db: SqliteDatabase;
  try {
    db = openSqlite(path, driver);
  } catch (error) {
    throw explainOpenFailure(path, error);
  }
  try {
    // busy_timeout first, so that even switching to WAL waits for a concurrent opener.
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
    db.pragma("journal_mode = WAL");
    // WAL + NORMAL: a power loss may drop the last commits but never corrupts the file.
    db.pragma("synchronous = NORMAL");
    // Temporary b-trees (materialized CTEs, sorts) in memory. Backed by a temp file, each opens a
    // pager whose page cache is allocated and freed in bulk, page faults and all: the run queue's
    // claim, which builds several and runs once per created task, took milliseconds instead of
    // tens of microseconds. Durability is untouched: nothing temporary outlives its statement.
    db.pragma("temp_store = MEMORY");
    migrate(db);
  } catch (error) {
    db.close();
    throw explainOpenFailure(path, error);
  }

  const tasks = prepareTaskStatements(db);
  const inputs = prepareInputStatements(db);
  const keys = prepareKeyStatements(db);
  const checkpoints = prepareCheckpointStatements(db);
  const sweeps = prepareSweepStatements(db);
  const meta = prepareMetaStatements(db);
  const views = prepareViewStatements(db);
  // The message and its timeline entry in one transaction: the timeline never misses a mark.
  const annotateOnce = db.transaction((id: string, patch: AnnotatePatch): boolean => {
    const result = tasks.annotate.run({
      id,
      now: patch.now,
      keepMessage: patch.statusMessage === undefined ? 1 : 0,
      statusMessage: patch.statusMessage ?? null,
      progress: patch.progress === undefined ? null : toJson(patch.progress),
    });
    if (result.changes !== 1) return false;
    if (patch.timeline === true) tasks.mark.run({ id, now: patch.now });
    return true;
  });
  const queue = prepareQueueStatements(db);
  let secret: Buffer | null = null;
  const writerLock = isFilePath(path) ? new SqliteWriterLock(path, driver) : null;

  const group = new GroupCommit(db);
  const streamEvents = sqliteStreamEvents(db, group);
  const waits = sqliteWaits(db, group, checkpoints);

  // .all(), never .get(), for a write with RETURNING: .get() steps once and resets, and
  // better-sqlite3 drops the reset's error — a commit that failed (SQLITE_FULL, an I/O error)
  // would return the row as if it were stored, and the task be acknowledged, then lost.
  const insertTask = (task: NewTask): TaskRecord => {
    const [row] = tasks.insert.all({
      id: task.id,
      owner: task.owner,
      method: task.method,
      name: task.name,
      request: toJson(task.request),
      origin: toJson(task.origin),
      createdAt: task.createdAt,
      ttlMs: task.ttlMs,
      expiresAt: expiresAt(task.createdAt, task.ttlMs),
      pollIntervalMs: task.pollIntervalMs,
      retryable: task.retryable ? 1 : 0,
    });
    if (row === undefined) throw duplicateTaskError(task.id);
    return taskFromRow(row);
  };

  const moveTask = (id: string, sources: readonly TaskStatus[], to: TaskStatus, patch: TransitionPatch): TaskRecord | null => {
    const [row] = tasks.transition.all({
      // .all(): see insertTask
      id,
      from: JSON.stringify(sources),
      to,
      now: patch.now,
      keepMessage: patch.statusMessage === undefined ? 1 : 0,
      statusMessage: patch.statusMessage ?? null,
      outcome: patch.outcome === undefined ? null : toJson(patch.outcome),
    });
    return row === undefined ? null : taskFromRow(row);
  };

  // The key and its task in one transaction (the group's): a taken key writes nothing.
  const insertKeyed = (task: NewTask, key: TaskKey): KeyedCreation => {
    const owner = ownerKey(task.owner);
    if (keys.claim.run({ ownerKey: owner, key: key.key, taskId: task.id, fingerprint: key.fingerprint }).changes === 1) {
      return { created: true, task: insertTask(task) };
    }
    const found = keys.find.get({ ownerKey: owner, key: key.key });
    if (found === undefined) throw new Error("idempotency key names no task");
    return { created: false, task: taskFromRow(found), fingerprint: found.key_fingerprint };
  };

  return {
    ...waits,

    // Webhook events: rows written by a trigger inside each status change (outbox-statements.ts).
    ...sqliteOutbox(db, () => group.flush()),
    // Paused tools: the claim statements skip their queued tasks (tool-pause-statements.ts).
    ...sqliteToolPauses(db, () => group.flush()),
    async createKeyed(task: NewTask, key: TaskKey): Promise<KeyedCreation> {
      return group.run(task.id, () => insertKeyed(task, key));
    },

    async findKey(owner: string | null, key: string): Promise<StoredKey | null> {
      group.flush();
      const found = keys.find.get({ ownerKey: ownerKey(owner), key });
      return found === undefined ? null : { task: taskFromRow(found), fingerprint: found.key_fingerprint };
    },

    async releaseKey(owner: string | null, key: string, taskId: string): Promise<boolean> {
      group.flush();
      return keys.release.run({ ownerKey: ownerKey(owner), key, taskId }).changes === 1;
    },

    async create(task: NewTask): Promise<TaskRecord> {
      // Committed in a group with the other creations and status changes of this turn; resolves
      // after that commit (group-commit.ts).
      return group.run(task.id, () => insertTask(task));
    },

    async transition(id: string, from: readonly TaskStatus[], to: TaskStatus, patch: TransitionPatch): Promise<TaskRecord | null> {
      checkTransitionPatch(to, patch);
      // The lifecycle table has the last word even over a caller's `from`: an illegal move never reaches SQL.
      const sources = from.filter((status) => canTransition(status, to));
      if (sources.length === 0) return null;
      // This store hands out no claims (one process runs every task): a claim named here is no
      // task's current one, so the write changes nothing (the Claim contract).
      if (patch.claim !== undefined) {
        group.flushFor(id);
        return null;
      }
      // A change someone waits for is committed once the promise jobs running now are done, not
      // after every other request the rest of this turn brings (group-commit.ts, "tick").
      return group.run(id, () => moveTask(id, sources, to, patch), patch.awaited ? "tick" : "turn");
    },

    async get(id: string, scope: OwnerScope): Promise<TaskRecord | null> {
      group.flushFor(id);
      const row = "any" in scope ? tasks.get.get(id) : tasks.getOwned.get(id, scope.owner);
      return row === undefined ? null : taskFromRow(row);
    },

    async list(owner: string | null, after: ListPosition | null, limit: number): Promise<TaskRecord[]> {
      group.flush();
      const n = wholeLimit(limit);
      if (n === 0) return [];
      const rows =
        after === null ? tasks.listFirst.all(owner, n) : tasks.listAfter.all({ owner, createdAt: after.createdAt, id: after.id, limit: n });
      return rows.map(taskFromRow);
    },

    async search(filter: TaskFilter, after: ListPosition | null, limit: number): Promise<TaskRecord[]> {
      group.flush();
      const n = wholeLimit(limit);
      return n === 0 ? [] : views.search(filter, after, n).map(taskFromRow);
    },

    async countByStatus(filter: TaskFilter): Promise<Record<TaskStatus, number>> {
      group.flush();
      const counts = zeroStatusCounts();
      for (const row of views.countByStatus(filter)) counts[row.status] = row.n;
      return counts;
    },

    async history(taskId: string): Promise<StatusChange[]> {
      group.flush();
      return views.history.all(taskId).map(statusChangeFromRow);
    },

    async annotate(id: string, patch: AnnotatePatch): Promise<boolean> {
      if (patch.claim !== undefined) {
        group.flush();
        return false;
      }
      // In the turn's group commit, as a status write: a status message or progress report is one
      // small write of one task, and a run that sets one (a replay of a woken task does) must not
      // cost a commit of its own, nor end the group the writes of other tasks were gathering in.
      // annotateOnce is a transaction of its own (a savepoint inside the group's), so the history
      // entry of a timeline mark is written with the message or not at all.
      return group.run(id, () => annotateOnce(id, patch));
    },

    async enqueueInput(request: Omit<InputRequest, "answer">, claim?: Claim): Promise<void> {
      group.flush();
      if (claim !== undefined) throw claimLostError(request.taskId);
      const result = inputs.enqueue.run({
        taskId: request.taskId,
        id: request.id,
        method: request.method,
        params: toJson(request.params),
        createdAt: request.createdAt,
      });
      if (result.changes === 1) return;
      throw inputs.taskExists.get(request.taskId) === undefined
        ? unknownTaskError(request.taskId)
        : duplicateInputError(request.taskId, request.id);
    },

    async pendingInputs(taskId: string): Promise<InputRequest[]> {
      group.flush();
      return inputs.pending.all(taskId).map(inputFromRow);
    },

    async inputs(taskId: string): Promise<InputRequest[]> {
      group.flush();
      return inputs.all.all(taskId).map(inputFromRow);
    },

    async getInput(taskId: string, inputId: string): Promise<InputRequest | null> {
      group.flush();
      const row = inputs.get.get(taskId, inputId);
      return row === undefined ? null : inputFromRow(row);
    },

    async answerInput(taskId: string, inputId: string, answer: TaskOutcome, claim?: Claim): Promise<boolean> {
      group.flush();
      if (claim !== undefined) return false;
      return inputs.answer.run(toJson(answer), taskId, inputId).changes === 1;
    },

    async saveCheckpoint(taskId: string, name: string, value: unknown, now: number, claim?: Claim): Promise<boolean> {
      group.flush();
      if (claim !== undefined) return false;
      return checkpoints.save.run({ taskId, name, value: toJson(value), createdAt: now }).changes === 1;
    },

    async checkpoints(taskId: string): Promise<Checkpoint[]> {
      // Only this task's queued writes change what it reads (a finished task's checkpoints go with its status write).
      group.flushFor(taskId);
      return checkpoints.all.all(taskId).map(checkpointFromRow);
    },

    async dropCheckpoints(taskId: string): Promise<number> {
      group.flush();
      return checkpoints.drop.run(taskId).changes;
    },

    async expiredActive(now: number, limit: number): Promise<TaskRecord[]> {
      group.flush();
      const n = wholeLimit(limit);
      return n === 0 ? [] : sweeps.expiredActive.all(now, n).map(taskFromRow);
    },

    async deleteExpired(now: number, limit: number, rules: RetentionRules = {}): Promise<ExpiredBatch> {
      group.flush();
      const n = wholeLimit(limit);
      return n === 0 ? { deleted: 0, unread: 0 } : sweeps.deleteExpired(now, n, rules.keepFinishedMs ?? 0, rules.rememberExpiredMs ?? 0);
    },

    async wasExpired(id: string, scope: OwnerScope): Promise<boolean> {
      const row = sweeps.wasExpired.get(id);
      return row !== undefined && ("any" in scope || row.owner === scope.owner);
    },

    async markFetched(id: string, now: number): Promise<boolean> {
      // Grouped like a status change: it follows every delivered result, and nobody waits for it.
      return group.run(id, () => sweeps.markFetched.run(now, id).changes > 0);
    },

    async activeTasks(limit: number): Promise<TaskRecord[]> {
      group.flush();
      const n = wholeLimit(limit);
      return n === 0 ? [] : sweeps.activeTasks.all(n).map(taskFromRow);
    },

    async countActive(owner: string | null): Promise<number> {
      group.flush();
      return sweeps.countActive.get(ownerKey(owner))?.n ?? 0;
    },

    async countStored(owner: string | null): Promise<number> {
      group.flush();
      return sweeps.countStored.get(ownerKey(owner))?.n ?? 0;
    },

    async claimRunnable(limit: number, now: number, caps: ClaimCaps): Promise<TaskRecord[]> {
      const n = wholeLimit(limit);
      if (n === 0) {
        group.flush();
        return [];
      }
      const uncapped = caps.perOwner === null && Object.keys(caps.perName).length === 0;
      const claim = (): TaskRow[] => {
        if (uncapped) {
          // Without caps, a claim with room for every queued task takes them all, whatever their
          // order: no ranking to compute, and no write at all when nothing is queued.
          const queued = queue.queuedUpTo.get({ limit: n })?.n ?? 0;
          if (queued === 0) return [];
          // .all(): see insertTask.
          if (queued <= n) return queue.claimAll.all({ now, limit: n });
        }
        const params = { limit: n, now, perOwner: caps.perOwner, caps: JSON.stringify(caps.perName) };
        return Object.keys(caps.perName).length === 0 ? queue.claimUncappedByName.all(params) : queue.claim.all(params);
      };
      // Committed with the writes queued before and after it in this turn (most often the
      // creations it is about to start), in one transaction.
      return (await group.run(CLAIM_GROUP_KEY, claim)).map(taskFromRow);
    },

    async startedTasks(limit: number): Promise<TaskRecord[]> {
      group.flush();
      const n = wholeLimit(limit);
      return n === 0 ? [] : queue.started.all(n).map(taskFromRow);
    },

    async queuedAhead(taskId: string): Promise<number | null> {
      group.flushFor(taskId);
      return queue.ahead.get(taskId)?.n ?? null;
    },

    async countQueued(owner: string | null): Promise<number> {
      group.flush();
      return queue.countQueued.get(owner)?.n ?? 0;
    },

    async queueDepths(): Promise<QueueDepth[]> {
      group.flush();
      return queue.depths.all().map((row) => ({ owner: row.owner, name: row.name, queued: row.n }));
    },

    async secret(): Promise<Buffer> {
      group.flush();
      if (!db.open) throw new TypeError("The database connection is not open");
      // Never changes once written, so one read per store is enough.
      secret ??= meta.secret();
      return Buffer.from(secret);
    },

    async acquireWriterLock(): Promise<void> {
      group.flush();
      if (!writerLock) return;
      if (!writerLock.acquire()) throw new StoreInUseError(resolve(path), meta.writer());
      meta.recordWriter({ pid: process.pid, host: hostname(), since: Date.now() });
    },
    streamEvents,

    async close(): Promise<void> {
      group.flush();
      if (db.open) db.close();
      writerLock?.release();
    },
  };
}
