/**
 * What an operator sees of a cluster's work distribution (the web view's workers panel): the
 * workers alive, the leases held, the queue. Read from the lease store, so every node shows the
 * same cluster whichever one is asked.
 */

/** What a worker says of itself on each heartbeat. */
export interface WorkerBeat {
  /** Its lease owner name (`worker-<host>-<pid>-<random>` from the CLI): unique per process. */
  workerId: string;
  /** When the worker started claiming, ms since the epoch. */
  startedAt: number;
  /** How many handlers it runs at once. */
  concurrency: number;
  /**
   * Its lease duration: a worker that has not beaten for that long is gone, exactly as its leases
   * are (it beats every third of it, as it renews).
   */
  leaseMs: number;
}

/** A live worker as the store knows it. */
export interface WorkerInfo extends WorkerBeat {
  /** Its last heartbeat, ms since the epoch. */
  heartbeatAt: number;
  /** The leases it holds now: the tasks it runs (those waiting in input_required included). */
  running: number;
}

/** A lease on a task. */
export interface LeaseInfo {
  taskId: string;
  /** The tool (the task's name). */
  name: string;
  /** `working` or `input_required`: only live tasks hold leases. */
  status: string;
  workerId: string;
  /** When this worker claimed it; null for a lease taken by a node older than this field. */
  since: number | null;
  /** When the lease runs out unless renewed (past: the worker is gone and the reaper will act). */
  expiresAt: number;
  /** How many times a worker has started the task, this run included. */
  attempts: number;
}

/** The cluster at one moment (three reads, not one snapshot: a task may move between them). */
export interface ClusterView {
  /** Workers whose last heartbeat is younger than their lease, oldest first. */
  workers: WorkerInfo[];
  /** Leases held, soonest expiry first, at most the asked limit. */
  leases: LeaseInfo[];
  /** More leases are held than were listed. */
  leasesTruncated: boolean;
  /** Unclaimed `working` tasks. */
  queueDepth: number;
}
