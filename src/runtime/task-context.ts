/**
 * What a handler gets besides its arguments. Protocol-neutral: `request()` is how the handler
 * asks its requestor something (the `mcp` layer offers `elicit()`/`sample()` on top of it).
 */
export interface TaskContext {
  readonly taskId: string;
  /** Aborts when the task is cancelled (T-CANCEL-3), expires, or the server shuts down. */
  readonly signal: AbortSignal;
  /**
   * Resolves when this run is parked (docs/durable-execution.md, Waiting): its handler is let go,
   * its call never settles, and the run ends here without an outcome.
   */
  readonly parked: Promise<void>;
  /**
   * Reports progress with the original request's progress token (T-PROG-1). Dropped once the
   * task is no longer running, so nothing is reported after a cancel.
   */
  progress(progress: number, total?: number, message?: string): void;
  /**
   * Publishes a log message of the task for whoever hears its progress; not stored. Dropped once
   * the task is no longer running. `level` is the binding's word for its severity.
   */
  log(level: string, data: unknown, logger?: string): void;
  /** Sets the task's human-readable statusMessage (T-LIFE-5). */
  setStatusMessage(message: string): Promise<void>;
  /** True when the requestor declared it can answer requests of this method. */
  accepts(method: string): boolean;
  /**
   * Sends a request to the requestor through the task (T-INPUT): the task moves to
   * `input_required`, the request waits in the task's queue until the requestor's `tasks/result`
   * stream takes it, and the task returns to `working` once every pending request is answered.
   * Resolves with the requestor's result; rejects with a TaskError carrying its JSON-RPC error.
   */
  request(method: string, params: unknown): Promise<unknown>;
  /**
   * Durable execution: runs `fn` and checkpoints its (JSON) result, or — when an earlier run of
   * this task already did — returns that result without running `fn`. Only tasks whose recovery is
   * "resume" keep checkpoints; for the others it just runs `fn`. See docs/durable-execution.md.
   */
  step<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /**
   * This run is never parked: its waits keep the call in memory (the tool has work of its own in
   * flight beside its waits, outside `step`). It still gives its slot back while it waits.
   */
  keepInMemory(): void;
  /**
   * Waits until `until` (ms since the epoch) without holding a slot; durable where the store keeps
   * waits: a replayable task is parked meanwhile and resumed by any node (docs/durable-execution.md).
   */
  sleep(until: number): Promise<void>;
  /**
   * Waits for the next event `name` of the task's owner (or until `timeoutAt`), without holding a
   * slot; parked like {@link sleep}.
   */
  waitForEvent(name: string, timeoutAt: number | null): Promise<{ timedOut: false; payload: unknown } | { timedOut: true }>;
}

/** What a handler's run produced, before the engine stores it. */
export interface RunResult {
  value: unknown;
  /** The request "did not complete successfully" though it produced a result (T-LIFE-4). */
  failed?: boolean;
  statusMessage?: string;
}

/** Runs one task. Supplied by the binding that knows what `task.method` means. */
export type TaskRunner = (task: import("../core/task.js").TaskRecord, ctx: TaskContext) => Promise<RunResult>;
