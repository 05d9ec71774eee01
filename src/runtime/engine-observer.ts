import type { TaskRecord } from "../core/task.js";

/** The limits whose refusals are counted (docs/limits.md). */
export type LimitName =
  | "active_tasks"
  | "stored_tasks"
  | "queued_inputs"
  | "queued_tasks"
  | "result_bytes"
  | "argument_bytes"
  | "body_bytes"
  | "task_operations"
  | "failed_lookups"
  | "sessions"
  | "sessions_per_client"
  | "event_streams"
  | "event_streams_per_viewer"
  | "event_bytes";

/**
 * What the engine (and the layers above it) report for monitoring, beyond what a store write
 * shows: metrics implement it, the engine never depends on how they are kept.
 */
export interface EngineObserver {
  /**
   * A `tasks/result` that had to wait was answered: `ms` from the terminal status write to the
   * answer (the event-driven wake-up latency; a call that found the task already done is not one).
   */
  resultWoken(task: TaskRecord, ms: number): void;
  /**
   * A `tasks/result` began (+1) or stopped (-1) waiting for its task to end: their sum is the
   * requests this process holds open for that. Optional: an observer written before it existed
   * still compiles.
   */
  resultsWaiting?(change: 1 | -1): void;
  /** A request was refused because it would exceed a limit. */
  limitRejected(limit: LimitName): void;
  /** Cluster mode: a worker stopped renewing the lease of `task`; the reaper re-queued or failed it. */
  leaseLost(task: TaskRecord, action: "requeued" | "failed"): void;
  /** An event was emitted and woke `woken` waiting tasks. Optional, like resultsWaiting. */
  eventEmitted?(woken: number): void;
  /** Waits were satisfied: by an event, a timer that came due, or an event wait that timed out. */
  waitsWoken?(reason: "event" | "timer", count: number): void;
}

/** Reports nothing: the default when no metrics are kept. */
export const silentObserver: EngineObserver = {
  resultWoken() {},
  resultsWaiting() {},
  limitRejected() {},
  leaseLost() {},
};
