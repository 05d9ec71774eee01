import { z } from "zod";
import { RpcCode } from "../../../core/errors.js";
import { readWireTask, type WireTask } from "../../wire/rev2025-11-25/wire.js";
import { ConnectionError, RemoteError, TaskCancelledError } from "../requestor-errors.js";
import { NO_TIMEOUT_MS, type PeerRequestOptions, type TaskPeer } from "./peer.js";
import type { LifecycleEvent, RemoteTaskHandle, TaskOutcome } from "../remote-task-info.js";

export type { TaskOutcome, LifecycleEvent } from "../remote-task-info.js";

/** Options of a {@link RemoteTask}: the peer it is polled through, the result schema, polling bounds and timeouts. */
export interface RemoteTaskOptions<R> {
  peer: TaskPeer;
  /** Schema of what `tasks/result` returns for this kind of request (T-RES-1). */
  resultSchema: z.ZodType<R>;
  /** Whether a successful result still means the request did not succeed (T-LIFE-4). */
  isFailure?: (result: R) => boolean;
  /** Poll interval when the receiver suggests none (T-TTL-6). Default 1000 ms. */
  defaultPollIntervalMs?: number;
  /**
   * Bounds on the poll interval, whatever the receiver suggests: a floor against a busy loop
   * (default 50 ms), a ceiling for a follower that must notice changes in time (default none).
   */
  pollIntervalBoundsMs?: { min?: number; max?: number };
  /**
   * Longest a `tasks/get` or `tasks/cancel` may go unanswered before it rejects with a
   * ConnectionError (-32001); default the SDK's 60 s. `tasks/result` is never cut off.
   */
  requestTimeoutMs?: number;
  onLifecycle?: (event: LifecycleEvent) => void;
  /** The task as the receiver last described it (e.g. from the CreateTaskResult). */
  initial?: WireTask;
  /**
   * Call `tasks/result` as soon as `input_required` is seen (T-INPUT-3). Default true; off for a
   * one-off look (`tasks get`), which must not take the task's questions.
   */
  answerInput?: boolean;
}

const TERMINAL = new Set<WireTask["status"]>(["completed", "failed", "cancelled"]);
/** Never poll faster than this unless told, whatever pollInterval says (0 would be a busy loop). */
const MIN_POLL_MS = 50;
const AnyObject = z.record(z.string(), z.unknown());

export function isTerminalStatus(status: WireTask["status"]): boolean {
  return TERMINAL.has(status);
}

/**
 * A task on the other side of a connection: poll it, follow its status, wait for its result,
 * cancel it. Works over any `TaskPeer`, so the same code serves a client waiting on a
 * server's tool task and a server waiting on a client's elicitation task.
 *
 * - Polling honours the receiver's `pollInterval` (T-GET-2, T-TTL-6) and notifications only
 *   speed it up: they are never relied on (T-NOTE-2).
 * - On `input_required` it calls `tasks/result` at once (T-INPUT-3), so the receiver can deliver
 *   its requests; they reach the handlers installed on the connection.
 * - `tasks/result` blocks with no client-side cut-off; the caller's AbortSignal is the limit.
 */
export class RemoteTask<R> implements RemoteTaskHandle<R> {
  readonly id: string;
  private latest: WireTask | null;
  private readonly options: RemoteTaskOptions<R>;
  private readonly unsubscribe: () => void;
  private readonly wakers = new Set<() => void>();
  private resultCall: { promise: Promise<TaskOutcome<R>>; controller: AbortController; waiters: number } | null = null;
  private settled: TaskOutcome<R> | null = null;
  private lastLogged = "";
  private disposed = false;

  constructor(taskId: string, options: RemoteTaskOptions<R>) {
    this.id = taskId;
    this.options = options;
    this.latest = null;
    this.unsubscribe = options.peer.onTaskStatus((task) => {
      if (task.taskId === this.id) this.observe(task);
    });
    if (options.initial) this.observe(options.initial);
  }

  /** The task as last seen (a poll, a notification, the CreateTaskResult), or null. */
  get last(): WireTask | null {
    return this.latest;
  }

  /** `tasks/get` (T-GET-1). Rejects with a RemoteError (e.g. -32602 not found) or a ConnectionError. */
  async status(options: { signal?: AbortSignal } = {}): Promise<WireTask> {
    const raw = await this.options.peer.request("tasks/get", { taskId: this.id }, AnyObject, this.requestOptions(options.signal));
    const task = readWireTask(raw);
    if (!task) throw new ConnectionError("The receiver answered tasks/get with something that is not a Task", RpcCode.InternalError);
    this.observe(task);
    return this.latest ?? task;
  }

  /**
   * The task's status changes: polls `tasks/get` at the receiver's pollInterval (T-GET-2), and
   * yields sooner when a `notifications/tasks/status` arrives (never relied on, T-NOTE-2). Yields
   * the current status first, then each change of status or statusMessage; ends after a
   * terminal status.
   */
  async *updates(options: { signal?: AbortSignal } = {}): AsyncGenerator<WireTask, void, undefined> {
    const { signal } = options;
    let lastYielded = "";
    let lastPoll = -Infinity;
    let pollNow = true;
    for (;;) {
      signal?.throwIfAborted();
      if (pollNow || Date.now() - lastPoll >= this.intervalMs()) {
        pollNow = false;
        lastPoll = Date.now();
        try {
          await this.status(signal !== undefined ? { signal } : {});
        } catch (error) {
          // After tasks/result answered, the receiver may already have dropped the task (T-CANCEL-5,
          // T-TTL-5): what the result said is then the last word.
          if (!this.settled) throw error;
          this.observeOutcome(this.settled);
        }
      }
      const current = this.latest;
      if (current) {
        const key = `${current.status}\u0000${current.statusMessage ?? ""}`;
        if (key !== lastYielded) {
          lastYielded = key;
          yield current;
        }
        if (isTerminalStatus(current.status)) return;
      }
      const woken = await this.sleep(Math.max(0, this.intervalMs() - (Date.now() - lastPoll)), signal);
      if (woken === "result") pollNow = true;
    }
  }

  /**
   * Waits for the task to end and returns how it ended; never throws for an outcome (a failure or
   * cancellation is a value here). Rejects only when the answer could not be had: a lookup error
   * (RemoteError, e.g. not found), a broken connection (ConnectionError), or `signal` aborting.
   */
  outcome(options: { signal?: AbortSignal } = {}): Promise<TaskOutcome<R>> {
    if (this.settled) return Promise.resolve(this.settled);
    const call = this.ensureResultCall();
    call.waiters++;
    const { signal } = options;
    if (!signal) return call.promise;
    return new Promise<TaskOutcome<R>>((resolve, reject) => {
      const onAbort = (): void => {
        this.release(call);
        reject(signal.reason);
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      call.promise.then(
        (value) => {
          signal.removeEventListener("abort", onAbort);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener("abort", onAbort);
          reject(error);
        },
      );
    });
  }

  /**
   * `tasks/result` (T-RES): the request's result — including one that reports failure, such as a
   * CallToolResult with `isError` — or a thrown RemoteError carrying the replayed JSON-RPC error
   * (T-RES-4), or a TaskCancelledError.
   */
  async result(options: { signal?: AbortSignal } = {}): Promise<R> {
    const outcome = await this.outcome(options);
    if ("result" in outcome) return outcome.result;
    throw outcome.error;
  }

  /** `tasks/cancel` (T-CANCEL-1): the task, now `cancelled`. Refused with -32602 once terminal (T-CANCEL-2). */
  async cancel(options: { signal?: AbortSignal } = {}): Promise<WireTask> {
    this.options.onLifecycle?.({ type: "cancel", taskId: this.id });
    const raw = await this.options.peer.request("tasks/cancel", { taskId: this.id }, AnyObject, this.requestOptions(options.signal));
    const task = readWireTask(raw);
    if (!task) throw new ConnectionError("The receiver answered tasks/cancel with something that is not a Task", RpcCode.InternalError);
    this.observe(task);
    return task;
  }

  /** Stops listening for notifications and abandons a pending `tasks/result`. */
  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.unsubscribe();
    this.resultCall?.controller.abort(new Error("The task handle was disposed"));
    for (const wake of [...this.wakers]) wake();
  }

  private intervalMs(): number {
    const { min = MIN_POLL_MS, max = Infinity } = this.options.pollIntervalBoundsMs ?? {};
    return Math.min(Math.max(min, this.latest?.pollInterval ?? this.options.defaultPollIntervalMs ?? 1000), max);
  }

  private requestOptions(signal: AbortSignal | undefined): PeerRequestOptions {
    return {
      ...(signal !== undefined && { signal }),
      ...(this.options.requestTimeoutMs !== undefined && { timeout: this.options.requestTimeoutMs }),
    };
  }

  private observe(task: WireTask): void {
    const previous = this.latest;
    // Terminal statuses never move (T-LIFE-3): a late "working" (an old poll, a notification
    // overtaken on another stream) must not hide the end.
    if (previous && isTerminalStatus(previous.status) && !isTerminalStatus(task.status)) return;
    if (previous && previous.lastUpdatedAt > task.lastUpdatedAt && !isTerminalStatus(task.status)) return;
    this.latest = task;
    const key = `${task.status}\u0000${task.statusMessage ?? ""}`;
    if (key !== this.lastLogged) {
      this.lastLogged = key;
      this.options.onLifecycle?.({
        type: "status",
        taskId: this.id,
        status: task.status,
        ...(task.statusMessage !== undefined && { statusMessage: task.statusMessage }),
      });
    }
    // T-INPUT-3: the receiver is waiting for us; its requests come on the tasks/result stream.
    if (task.status === "input_required" && !this.disposed && this.options.answerInput !== false) this.ensureResultCall(true);
    if (isTerminalStatus(task.status)) this.unsubscribe();
    for (const wake of [...this.wakers]) wake();
  }

  private observeOutcome(outcome: TaskOutcome<R>): void {
    const status = outcome.status;
    if (this.latest && isTerminalStatus(this.latest.status)) return;
    const now = new Date().toISOString();
    this.observe({ ...(this.latest ?? { taskId: this.id, createdAt: now, ttl: null }), status, lastUpdatedAt: now });
  }

  private sleep(ms: number, signal: AbortSignal | undefined): Promise<"timer" | "event" | "result"> {
    return new Promise((resolve, reject) => {
      let done = false;
      const finish = (why: "timer" | "event" | "result"): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.wakers.delete(onEvent);
        signal?.removeEventListener("abort", onAbort);
        resolve(why);
      };
      const onEvent = (): void => finish(this.settled ? "result" : "event");
      const onAbort = (): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.wakers.delete(onEvent);
        reject(signal?.reason);
      };
      const timer = setTimeout(() => finish("timer"), ms);
      this.wakers.add(onEvent);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  private ensureResultCall(pinned = false): { promise: Promise<TaskOutcome<R>>; controller: AbortController; waiters: number } {
    if (!this.resultCall) {
      const controller = new AbortController();
      const call = { controller, waiters: pinned ? 1 : 0, promise: this.fetchOutcome(controller.signal) };
      call.promise.then(
        (outcome) => {
          this.settled = outcome;
          this.options.onLifecycle?.({ type: "result", taskId: this.id, status: outcome.status });
          for (const wake of [...this.wakers]) wake();
        },
        () => {
          // A failed call may be retried by the next caller.
          if (this.resultCall === call) this.resultCall = null;
        },
      );
      this.resultCall = call;
      return call;
    }
    if (pinned && this.resultCall.waiters === 0) this.resultCall.waiters++;
    return this.resultCall;
  }

  private release(call: { controller: AbortController; waiters: number }): void {
    call.waiters--;
    if (call.waiters <= 0 && this.resultCall === call) {
      // Nobody waits any more: let the receiver stop streaming to us.
      this.resultCall = null;
      call.controller.abort(new Error("No one is waiting for the result any more"));
    }
  }

  private async fetchOutcome(signal: AbortSignal): Promise<TaskOutcome<R>> {
    const { peer, resultSchema, isFailure } = this.options;
    try {
      const value = await peer.request("tasks/result", { taskId: this.id }, resultSchema, { signal, timeout: NO_TIMEOUT_MS });
      return isFailure?.(value) ? { status: "failed", result: value } : { status: "completed", result: value };
    } catch (error) {
      if (signal.aborted || !(error instanceof RemoteError)) throw error;
      const sent = { code: error.code, message: error.message, data: error.data };
      if (error.code === RpcCode.TaskCancelled)
        return { status: "cancelled", error: new TaskCancelledError(this.id, this.latest?.statusMessage, sent) };
      // Is this the task's own error, replayed (T-RES-4), or did the call itself fail (not found,
      // server shutting down)? The task's status tells.
      const task = await this.status().catch(() => null);
      if (task?.status === "cancelled") return { status: "cancelled", error: new TaskCancelledError(this.id, task.statusMessage, sent) };
      if (task?.status === "failed") return { status: "failed", error: new RemoteError(error.code, error.message, error.data, this.id) };
      throw error;
    }
  }
}
