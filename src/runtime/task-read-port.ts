import { isWaitStore, type WaitRecord } from "../store/wait-store.js";
import { isCheckpointStore, type Checkpoint } from "../store/checkpoint-store.js";
import { pausedMessage } from "./engine/task-lookups.js";
import type { ListPosition } from "../core/cursor.js";
import { retainedUntil, type InputRequest, type StatusChange, type TaskRecord } from "../core/task.js";
import type { TaskStatus } from "../core/task-status.js";
import type { ClusterView } from "../store/cluster-view.js";
import { isLeaseStore } from "../store/lease-store.js";
import { isQueueView, type QueueDepth } from "../store/run-queue.js";
import type { StreamEventStore } from "../store/stream-event-store.js";
import type { OwnerScope, TaskFilter, TaskStore } from "../store/task-store.js";

/**
 * What the layers above the engine may read of its store (the web view, the readiness probe, the
 * HTTP sessions, the bindings' cursors). Reads only: every write goes through an engine operation,
 * so its owner check, limits, audit line and events cannot be skipped.
 */
export interface TaskReadPort {
  /** Whether the store keeps durable waits: only then can a task be parked (and `TaskFilter.parked` find any). */
  readonly keepsWaits: boolean;
  /** The task as `scope` may see it (default: any owner, for operators), or null. No expiry check, no audit. */
  task(id: string, scope?: OwnerScope): Promise<TaskRecord | null>;
  /** Up to `limit` tasks matching `filter`, newest first, older than `after`. */
  search(filter: TaskFilter, after: ListPosition | null, limit: number): Promise<TaskRecord[]>;
  /** How many tasks matching `filter` are in each status. */
  countByStatus(filter: TaskFilter): Promise<Record<TaskStatus, number>>;
  /** The task's status timeline, oldest first. */
  history(taskId: string): Promise<StatusChange[]>;
  /** Every question the task asked, answered or not, oldest first. */
  inputs(taskId: string): Promise<InputRequest[]>;
  /** One of the task's questions, or null. */
  input(taskId: string, inputId: string): Promise<InputRequest | null>;
  /** The task's questions still unanswered, oldest first (no owner check: see TaskEngine.pendingInputs for requests). */
  pendingInputs(taskId: string): Promise<InputRequest[]>;
  /** The task's checkpoints (its `ctx.step` results and satisfied waits), oldest first; empty when the store keeps none. */
  checkpoints(taskId: string): Promise<Checkpoint[]>;
  /** The task's timers and event waits not yet satisfied; empty when the store keeps no waits. */
  waits(taskId: string): Promise<WaitRecord[]>;
  /** Tasks waiting for a worker, in cluster mode; null on a single node. */
  queueDepth(): Promise<number | null>;
  /** Whether the task waits in the queue (created, not started; null when the store keeps no queue). */
  isQueued(taskId: string): Promise<boolean | null>;
  /** Tasks waiting for a handler per (owner, tool), when the store keeps a queue; null otherwise. */
  queueDepths(): Promise<QueueDepth[] | null>;
  /** The cluster's workers and leases as the store sees them now, in cluster mode; null on a single node. */
  clusterView(now: number): Promise<ClusterView | null>;
  /** The random secret kept with the data: keys for cursors and session tokens that every node shares. */
  secret(): Promise<Buffer>;
  /** The store's log of Streamable HTTP stream events (resumption), when it keeps one. */
  readonly streamEvents: StreamEventStore | undefined;
}

/**
 * The read port over `store`; `clustered` says whether the engine distributes tasks through it.
 * A queued task of a paused tool (`isPaused`) reads with the status message that says so.
 * The tasks it reads carry as `expiresAt` the end of their retention (`keepFinishedMs` after a
 * finished task ended, when that is later than its ttl), which is what an operator needs to know.
 */
export function taskReadPort(
  store: TaskStore,
  clustered: boolean,
  keepFinishedMs = 0,
  isPaused: (name: string) => boolean = () => false,
): TaskReadPort {
  const leases = clustered && isLeaseStore(store) ? store : null;
  const retained = (task: TaskRecord): TaskRecord => ({ ...task, expiresAt: retainedUntil(task, keepFinishedMs) });
  // A queued task of a paused tool says why it waits, as a requestor's get says it (never stored).
  const shown = async (task: TaskRecord): Promise<TaskRecord> => {
    const kept = retained(task);
    if (task.status !== "working" || !isPaused(task.name) || !isQueueView(store)) return kept;
    return (await store.queuedAhead(task.id)) === null ? kept : { ...kept, statusMessage: pausedMessage(task.name) };
  };
  return {
    keepsWaits: isWaitStore(store),
    task: async (id, scope = { any: true }) => {
      const task = await store.get(id, scope);
      return task && shown(task);
    },
    search: async (filter, after, limit) => Promise.all((await store.search(filter, after, limit)).map(shown)),
    countByStatus: (filter) => store.countByStatus(filter),
    history: (taskId) => store.history(taskId),
    inputs: (taskId) => store.inputs(taskId),
    input: (taskId, inputId) => store.getInput(taskId, inputId),
    pendingInputs: (taskId) => store.pendingInputs(taskId),
    checkpoints: async (taskId) => (isCheckpointStore(store) ? store.checkpoints(taskId) : []),
    waits: async (taskId) => (isWaitStore(store) ? store.waits(taskId) : []),
    queueDepth: async () => (leases ? leases.queueDepth() : null),
    isQueued: async (taskId) => (isQueueView(store) ? (await store.queuedAhead(taskId)) !== null : null),
    queueDepths: async () => (isQueueView(store) ? store.queueDepths() : null),
    clusterView: async (now) => (leases ? leases.clusterView(now) : null),
    secret: () => store.secret(),
    streamEvents: store.streamEvents,
  };
}
