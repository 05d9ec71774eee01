import type { ListPosition } from "../core/cursor.js";
import type { TaskStatus } from "../core/task-status.js";
import type { InputRequest, NewTask, StatusChange, TaskOutcome, TaskProgress, TaskRecord } from "../core/task.js";
import type { StreamEventStore } from "./stream-event-store.js";
import type { StoreNotify } from "../core/store-notify.js";
import type { Claim } from "./claim.js";
import type { TaskKey } from "../core/idempotency.js";

/**
 * What {@link TaskStore.createKeyed} did: stored the new task, or found the task the caller's key
 * already names (nothing written) with the fingerprint the key was first used with.
 */
export type KeyedCreation = { created: true; task: TaskRecord } | { created: false; task: TaskRecord; fingerprint: string };

/** The task a caller's key names, with the fingerprint the key was first used with. */
export interface StoredKey {
  task: TaskRecord;
  fingerprint: string;
}

/** Fields a transition may set together with the new status, in the same atomic write. */
export interface TransitionPatch {
  /** `undefined` keeps the current message; `null` clears it. */
  statusMessage?: string | null;
  /** Only with a terminal status. */
  outcome?: TaskOutcome;
  now: number;
  /** Sent with the write by a store that {@link TaskStore.sendsNotify}; ignored by the others. */
  notify?: StoreNotify;
  /** A worker's write: applied only while this claim is the task's current one (see `Claim`). */
  claim?: Claim;
  /**
   * A request of this process is waiting for this change (a blocked result request, a watch): a
   * store that groups its commits commits this write without waiting for the end of the
   * event-loop turn. Only when the write is acknowledged changes; what is stored does not.
   */
  awaited?: boolean;
}

/**
 * How long what the sweeper deletes is kept, and remembered afterwards (docs/limits.md, Retention).
 * The same on every node sharing a store: whichever node sweeps first applies its own.
 */
export interface RetentionRules {
  /**
   * A finished task (and its result) stays at least this long after it ended, even past its
   * expiresAt: a task that ran longer than its ttl still leaves its result for a while. Default 0.
   */
  keepFinishedMs?: number;
  /**
   * How long the id of a task deleted at its retention is remembered as expired (see
   * {@link TaskStore.wasExpired}); 0 remembers nothing. Default 0.
   */
  rememberExpiredMs?: number;
}

/** What one {@link TaskStore.deleteExpired} batch deleted. */
export interface ExpiredBatch {
  deleted: number;
  /** Of those, tasks that ended `completed` or `failed` whose result was never fetched ({@link TaskStore.markFetched}). */
  unread: number;
}

/**
 * Who may see a task. `{ any: true }` skips owner filtering (internal use: recovery, sweeps);
 * otherwise only tasks whose owner equals `owner` (null = unauthenticated tasks) match.
 */
export type OwnerScope = { owner: string | null } | { any: true };

/** Which tasks {@link TaskStore.search} and {@link TaskStore.countByStatus} look at. */
export interface TaskFilter {
  scope: OwnerScope;
  /** Only tasks in one of these statuses; absent = any status (an empty list matches nothing). */
  statuses?: readonly TaskStatus[];
  /** Only tasks with this name (the tool's name for tools/call). */
  name?: string;
  /** Only tasks whose id starts with this (a person pastes part of an id). */
  idPrefix?: string;
  /**
   * Only tasks of the owner a person would name: the owner key itself, or the subject part of an
   * `issuer|subject` key (the text after the first "|"), so `alice` finds `local|alice`. Tasks
   * without an owner never match. It narrows `scope`, never widens it.
   */
  ownerName?: string;
  /** Only tasks created at or after this time (ms since the epoch). */
  createdFrom?: number;
  /** Only tasks created before this time (ms since the epoch). */
  createdTo?: number;
  /**
   * Only parked tasks (wait mode "parked": their handler unloaded until what they wait for
   * arrives). A store that keeps durable waits (`WaitStore`) honours it; the web view refuses
   * the filter on any other.
   */
  parked?: boolean;
}

/** What {@link TaskStore.annotate} writes. */
export interface AnnotatePatch {
  statusMessage?: string | null;
  progress?: TaskProgress;
  now: number;
  claim?: Claim;
  /** Also append a timeline entry (see {@link TaskStore.annotate}). */
  timeline?: boolean;
}

/**
 * Durable storage of tasks, their input-request queues and their outcomes.
 *
 * The contract (checked by `src/testing/store-contract.ts` against every implementation):
 * - `transition` is a compare-and-set: it writes only when the current status is one of `from`,
 *   and callers pass `allowedSources(to)` from the lifecycle table, so a late outcome can never
 *   overwrite `cancelled` and terminal states never move (T-LIFE-3, T-CANCEL-4).
 * - `answerInput` writes an answer at most once.
 * - `list` is a keyset walk over (createdAt, id) ascending, stable under concurrent inserts;
 *   `search` walks (createdAt, id) descending (newest first, for operators).
 * - Every status write (create and each successful transition) appends a {@link StatusChange} to
 *   the task's history in the same atomic write, so the timeline never disagrees with the status.
 * - Nothing here knows the wire format of any protocol revision.
 */
export interface TaskStore {
  /**
   * Stores a new task in `working`. Rejects a duplicate id. `notify`: see {@link sendsNotify}.
   */
  create(task: NewTask, notify?: StoreNotify): Promise<TaskRecord>;

  /**
   * {@link create} under an idempotency key: the key is unique per (owner, key), enforced by the
   * store in the same atomic write that stores the task (a unique index, `INSERT … ON CONFLICT`),
   * so concurrent creations with one key — from any number of processes sharing the store — store
   * exactly one task and every other one gets that task back. The key lives as long as its task:
   * deleting the task (the sweeper) deletes it too.
   */
  createKeyed(task: NewTask, key: TaskKey, notify?: StoreNotify): Promise<KeyedCreation>;

  /**
   * Forgets `owner`'s key if it still names `taskId` (compare-and-delete); false when it names
   * another task or nothing. For keys the server derived itself, which stop naming a task once
   * it has ended.
   */
  releaseKey(owner: string | null, key: string, taskId: string): Promise<boolean>;

  /**
   * The task `owner`'s key names, or null; writes nothing. Lets a keyed retry be answered with
   * its task before the limits on new tasks are applied.
   */
  findKey(owner: string | null, key: string): Promise<StoredKey | null>;

  /**
   * True for a store that sends the `notify` given to `create` and `transition` with the write,
   * only if it commits (the PostgreSQL store). The others ignore it.
   */
  readonly sendsNotify?: boolean;

  get(id: string, scope: OwnerScope): Promise<TaskRecord | null>;

  /** Up to `limit` tasks of `owner` strictly after `after`, in (createdAt, id) order. */
  list(owner: string | null, after: ListPosition | null, limit: number): Promise<TaskRecord[]>;

  /**
   * Up to `limit` tasks matching `filter`, newest first: (createdAt, id) descending, strictly
   * after `after` in that order (i.e. older than it). For the operator's view; owner-bound callers
   * pass their own scope.
   */
  search(filter: TaskFilter, after: ListPosition | null, limit: number): Promise<TaskRecord[]>;

  /** How many tasks matching `filter` are in each status (every status is present, 0 when none). */
  countByStatus(filter: TaskFilter): Promise<Record<TaskStatus, number>>;

  /** The task's status timeline, oldest first; empty for an unknown task. */
  history(taskId: string): Promise<StatusChange[]>;

  /**
   * Moves the task to `to` if its current status is in `from`; returns the updated record, or
   * null when the task is missing or its status was not in `from` (nothing written).
   */
  transition(id: string, from: readonly TaskStatus[], to: TaskStatus, patch: TransitionPatch): Promise<TaskRecord | null>;

  /**
   * Sets statusMessage / progress on a non-terminal task without changing its status; with a
   * `claim`, only while it is the task's current one (false otherwise). With `timeline`, the same
   * write also appends a {@link StatusChange} (the unchanged status, the message as it now reads,
   * `now`) to the history: what happens to a run without a status change (a re-run after a restart
   * or a drain, a hand-back) is then on the task's timeline like its status changes.
   */
  annotate(id: string, patch: AnnotatePatch): Promise<boolean>;

  /**
   * Queues a request for the requestor. With a `claim` that is no longer the task's current one,
   * nothing is queued and a StoreError "claim_lost" is thrown.
   */
  enqueueInput(request: Omit<InputRequest, "answer">, claim?: Claim): Promise<void>;

  /** Queued requests of a task that have no answer yet, oldest first. */
  pendingInputs(taskId: string): Promise<InputRequest[]>;

  getInput(taskId: string, inputId: string): Promise<InputRequest | null>;

  /** Every request of a task, answered or not, oldest first (the input_required exchange). */
  inputs(taskId: string): Promise<InputRequest[]>;

  /**
   * Records the answer once; false when already answered or unknown — or, with a `claim` (a run
   * abandoning a question of an earlier run), when that claim is no longer the task's current one.
   */
  answerInput(taskId: string, inputId: string, answer: TaskOutcome, claim?: Claim): Promise<boolean>;

  /** Non-terminal tasks whose expiresAt ≤ now, at most `limit`. */
  expiredActive(now: number, limit: number): Promise<TaskRecord[]>;

  /**
   * Deletes up to `limit` terminal tasks past their retention — expiresAt ≤ now and ended (updatedAt)
   * at least `keepFinishedMs` ago — with their input queues, history and keys, most overdue first.
   * Their ids are remembered as expired for `rememberExpiredMs` (remembered ids older than that are
   * forgotten by the same call), each with its owner.
   */
  deleteExpired(now: number, limit: number, rules?: RetentionRules): Promise<ExpiredBatch>;

  /**
   * True when `id` names a task of `scope` that {@link deleteExpired} deleted and still remembers:
   * a lookup answers "expired" rather than "not found" for it. Another owner's id is never one.
   */
  wasExpired(id: string, scope: OwnerScope): Promise<boolean>;

  /**
   * Records that the result of the terminal task `id` was delivered to its requestor; true only the
   * first time (so a counter of fetched results counts each task once, across processes).
   */
  markFetched(id: string, now: number): Promise<boolean>;

  /** Every non-terminal task (used at start to recover work a dead process left behind). */
  activeTasks(limit: number): Promise<TaskRecord[]>;

  /** Number of non-terminal tasks of an owner (per-owner concurrency limits). */
  countActive(owner: string | null): Promise<number>;

  /**
   * Number of tasks of an owner still stored, in any status (per-owner storage limits): expired
   * tasks count until the sweeper deletes them. Null counts only the tasks without an owner.
   */
  countStored(owner: string | null): Promise<number>;

  /** A random secret kept with the data (cursor MACs survive restarts), created on first use. */
  secret(): Promise<Buffer>;

  /**
   * The events of Streamable HTTP streams, kept in the same database for resumption (see
   * {@link StreamEventStore}). Optional: without it the HTTP server keeps them in memory.
   */
  readonly streamEvents?: StreamEventStore;

  close(): Promise<void>;
}
