import type { TaskOutcome, TaskRecord } from "../core/task.js";
import type { ClusterView, WorkerBeat } from "./cluster-view.js";
import type { TaskStore } from "./task-store.js";
import type { Claim, ClaimedTask } from "./claim.js";
import type { ClaimCaps, QueueView } from "./run-queue.js";

/**
 * Work distribution for a cluster: tasks wait unclaimed in the store until a worker leases them.
 * A worker renews its leases while it runs their handlers; a lease that runs out means the worker
 * is gone, and any node's reaper then re-queues the task (retryable tools, bounded attempts) or
 * fails it. Every operation is a compare-and-set on (lease owner, lease expiry), so two workers
 * never hold one task and a reaper never takes a task whose worker renewed in time.
 */
export interface LeaseStore {
  /**
   * Leases up to `limit` unclaimed `working` tasks to `workerId` until `now + leaseMs`, in the
   * fair order within `caps` (see `QueueView`: round-robin over owners, FIFO within one;
   * without caps and with one owner, oldest first). Concurrent claimers never get the same task
   * (FOR UPDATE SKIP LOCKED). `names`, when given, restricts claims to tasks of those names (a
   * worker that lacks a tool never takes its tasks). Each task comes with its claim: the fence of
   * every write of the run.
   */
  claim(workerId: string, limit: number, leaseMs: number, now: number, names?: readonly string[], caps?: ClaimCaps): Promise<ClaimedTask[]>;

  /**
   * The tasks whose lease `workerId` holds at `now`, each with its claim. A worker asks after a
   * claim whose answer it lost (the connection dropped while the statement committed): those
   * tasks are leased to it although it never heard of them, and would otherwise wait for their
   * leases to run out as if the worker had died.
   */
  heldLeases(workerId: string, now: number): Promise<ClaimedTask[]>;

  /** Extends the leases `workerId` still holds among `taskIds`; returns the ids still held. */
  renew(workerId: string, taskIds: readonly string[], leaseMs: number, now: number): Promise<string[]>;

  /** Non-terminal tasks whose lease ran out before `now`, with the worker that held it and when it ran out. */
  expiredLeases(now: number, limit: number): Promise<Array<{ task: TaskRecord; workerId: string; attempts: number; expiresAt: number }>>;

  /**
   * Puts a task back in the queue (unclaimed, `working`) if `workerId` still holds its expired
   * lease and it has run fewer than `maxAttempts` times; queued input requests of the lost run
   * are answered with an error so they stop being delivered — unless `keepInputs` (a resumed task:
   * its next run asks them again and waits for the same answers). False when the CAS lost.
   */
  requeue(taskId: string, workerId: string, maxAttempts: number, now: number, options?: { keepInputs?: boolean }): Promise<boolean>;

  /**
   * Fails a task whose worker was lost: moves it to `failed` with this message and outcome only if
   * `workerId` still holds its expired lease (so a task another worker has meanwhile re-run is
   * never failed by a stale reaper). Returns the failed record, or null when the CAS lost.
   */
  failExpired(taskId: string, workerId: string, now: number, statusMessage: string, outcome: TaskOutcome): Promise<TaskRecord | null>;

  /**
   * Drops the lease of a task whose handler ended here, if `claim` is still the task's current
   * claim (the same worker may hold a newer claim of it: its lease ran out and it claimed the
   * task again, and that run's lease must stay).
   */
  release(taskId: string, claim: Claim): Promise<void>;

  /**
   * A draining worker gives back a task whose handler it stopped: if `claim` is still the task's
   * current claim, the task is queued again (`working`, unclaimed, so any worker claims it at once, this
   * run not counted against the attempts), with `statusMessage`; its pending inputs are kept.
   * Returns the task as written, or null when the claim was no longer the current one.
   */
  handBack(taskId: string, claim: Claim, now: number, statusMessage: string): Promise<TaskRecord | null>;

  /** Unclaimed `working` tasks (queue depth, for metrics). */
  queueDepth(): Promise<number>;

  /**
   * Whether an unclaimed `working` task created at `time` or before is waiting (of one of `names`,
   * when given): what a standby worker that hears no events looks for, at the end of each standby.
   */
  queuedSince(time: number, names?: readonly string[]): Promise<boolean>;

  /**
   * Records that a worker is alive at `now` (its row is created by the first beat; `startedAt` is
   * kept from then on). Workers beat as they renew, so one that stops is gone from
   * {@link clusterView} when its leases run out. Rows of workers gone for over an hour are dropped.
   * Answers the ids of the workers alive at `now`, this one included, in {@link clusterView}'s
   * order (oldest start first): the order in which the worker pool wakes them for new work.
   */
  heartbeat(worker: WorkerBeat, now: number): Promise<string[]>;

  /** Removes a worker that stopped cleanly: it is gone from {@link clusterView} at once. */
  retire(workerId: string): Promise<void>;

  /** The workers alive at `now`, the leases held (at most `leaseLimit`, default 500) and the queue depth. */
  clusterView(now: number, options?: { leaseLimit?: number }): Promise<ClusterView>;
}

/** A store a cluster runs on: tasks, leases and the run queue (what {@link isLeaseStore} checks). */
export type ClusterStore = TaskStore & LeaseStore & QueueView;

/** Whether a store can hand tasks to a cluster's workers (claim and renew leases). */
export function isLeaseStore(store: TaskStore): store is ClusterStore {
  return typeof (store as Partial<LeaseStore>).claim === "function" && typeof (store as Partial<LeaseStore>).renew === "function";
}
