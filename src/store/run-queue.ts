import type { TaskRecord } from "../core/task.js";
import type { TaskStore } from "./task-store.js";

/**
 * The caps a claim respects besides the claimer's own free slots. Counts are store-wide: on a
 * cluster they cover every worker's running handlers, so a caller's cap holds across the cluster.
 */
export interface ClaimCaps {
  /** Handlers of one owner running at once (tasks without an owner share one allowance); null: no cap. */
  perOwner: number | null;
  /** Handlers of one task name (a tool) running at once; names not listed have no cap. */
  perName: Readonly<Record<string, number>>;
}

export const NO_CAPS: ClaimCaps = { perOwner: null, perName: {} };

/** Queued tasks of one owner and name (for metrics and the operator's view). */
export interface QueueDepth {
  owner: string | null;
  name: string;
  queued: number;
}

/**
 * The waiting line of created tasks no handler has started yet, read the same way by every store.
 *
 * The fair order, the same in every store (the store contract suite checks it): among queued tasks
 * (their name's cap not already reached), each gets its rank within its owner's queue (FIFO by
 * createdAt, id) plus the owner's handlers running now; tasks are taken by that score, then
 * oldest first, so owners are served in turn (round-robin, an owner with work running waits
 * behind one without) and one owner's tasks in creation order. A task is skipped while taking it
 * would put its owner over `perOwner` or its name over its cap.
 */
export interface QueueView {
  /**
   * How many queued tasks of the same owner were created before this one (it starts after them);
   * null when the task is not queued (started, waiting for input, finished, unknown).
   */
  queuedAhead(taskId: string): Promise<number | null>;
  /** Queued tasks of `owner` (null: those without an owner). */
  countQueued(owner: string | null): Promise<number>;
  /** Queued tasks per (owner, name); only pairs with at least one. */
  queueDepths(): Promise<QueueDepth[]>;
}

/**
 * A single node's queue (memory, SQLite): tasks are created queued and a handler starts only once
 * the node's dispatcher claims them; a started task stays started (a restart recovers it by its
 * tool's rules), a queued one stays queued across restarts. Cluster stores claim with leases instead.
 */
export interface RunQueueStore extends QueueView {
  /**
   * Marks up to `limit` queued `working` tasks as started, in the fair order (see `QueueView`)
   * within `caps`, in one write, and returns them.
   */
  claimRunnable(limit: number, now: number, caps: ClaimCaps): Promise<TaskRecord[]>;
  /** Non-terminal tasks whose handler had started (recovery after a restart looks only at these). */
  startedTasks(limit: number): Promise<TaskRecord[]>;
}

export function isRunQueueStore(store: TaskStore): store is TaskStore & RunQueueStore {
  return typeof (store as Partial<RunQueueStore>).claimRunnable === "function";
}

export function isQueueView(store: TaskStore): store is TaskStore & QueueView {
  return typeof (store as Partial<QueueView>).queuedAhead === "function";
}
