import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { RpcCode } from "../../../core/errors.js";
import { ConnectionError, InputRefusedError, RemoteError, TaskCancelledError } from "../requestor-errors.js";
import {
  isTerminalTaskStatus as isTerminalStatus,
  type LifecycleEvent,
  type RemoteTaskInfo,
  type RemoteTaskProgress,
  type TaskOutcome,
} from "../remote-task-info.js";
import { METHOD } from "../../wire/rev2026-07-28/wire.js";
import type { ToolTask } from "../requestor-era.js";
import { readDetailedTask, type DetailedTask } from "./detailed-task.js";
import { answerInputs, capabilitiesOf, type InputHandlers } from "./input-answers.js";
import type { StatelessConnection } from "./stateless-connection.js";

export interface StatelessTaskOptions {
  connection: StatelessConnection;
  handlers: InputHandlers;
  /** Answer `inputRequests` through `tasks/update` while waiting for the outcome (off for `tasks get`). */
  answerInput: boolean;
  onLifecycle: (event: LifecycleEvent) => void;
  initial?: RemoteTaskInfo;
  /** When the task suggests no `pollIntervalMs`. Default 1000 ms. */
  defaultPollIntervalMs?: number;
  /** Each new progress report a poll shows (our server's `tasks/get` carries it). */
  onProgress?: (progress: RemoteTaskProgress) => void;
}

/** Never poll faster than this, whatever pollIntervalMs says. */
const MIN_POLL_MS = 50;

/**
 * A task of a 2026-07-28 server (SEP-2663), followed by polling `tasks/get` at its
 * `pollIntervalMs` (X-GET-2): the DetailedTask carries the result or error inline (X-GET-4..8),
 * or the questions it waits for (`inputRequests`, X-GET-3), which are answered through the
 * application's handlers and sent back with `tasks/update` one key at a time (partial sets are
 * fine, X-UPD-9; each key once, X-UPD-3). Nothing needs a stream or a session, so a handle made
 * from a bare id in a new process — after either side restarted — works exactly as the first.
 */
export class StatelessTask implements ToolTask {
  readonly id: string;
  private latest: RemoteTaskInfo | null = null;
  private detail: DetailedTask | null = null;
  private readonly answered = new Set<string>();
  /** Questions this handle's handler refused, by key (see follow()). */
  private readonly refused = new Map<string, InputRefusedError>();
  private readonly stop = new AbortController();
  private readonly wakers = new Set<() => void>();
  private waiting: Promise<TaskOutcome<CallToolResult>> | null = null;
  private lastLogged = "";
  private lastProgress = "";

  constructor(
    taskId: string,
    private readonly options: StatelessTaskOptions,
  ) {
    this.id = taskId;
    // What the creation said is not a read of the caller's: a handle nobody follows answers nothing.
    if (options.initial) this.observe({ task: options.initial }, false);
  }

  get last(): RemoteTaskInfo | null {
    return this.latest;
  }

  async status(options: { signal?: AbortSignal } = {}): Promise<RemoteTaskInfo> {
    return (await this.fetch(options.signal)).task;
  }

  async *updates(options: { signal?: AbortSignal } = {}): AsyncGenerator<RemoteTaskInfo, void, undefined> {
    let lastYielded = "";
    for (;;) {
      options.signal?.throwIfAborted();
      // While outcome() polls, its answers are read here instead of a second tasks/get each interval.
      const current =
        this.waiting && this.latest ? this.latest : await this.status(options.signal !== undefined ? { signal: options.signal } : {});
      const key = `${current.status}\u0000${current.statusMessage ?? ""}`;
      if (key !== lastYielded) {
        lastYielded = key;
        yield current;
      }
      if (isTerminalStatus(current.status)) return;
      await this.sleep(this.intervalMs(), options.signal);
    }
  }

  outcome(options: { signal?: AbortSignal } = {}): Promise<TaskOutcome<CallToolResult>> {
    this.waiting ??= this.follow().then((outcome) => {
      this.options.onLifecycle({ type: "result", taskId: this.id, status: outcome.status });
      return outcome;
    });
    // A failed wait may be retried by the next caller.
    this.waiting.catch(() => (this.waiting = null));
    const { signal } = options;
    if (!signal) return this.waiting;
    return Promise.race([
      this.waiting,
      new Promise<never>((_, reject) => {
        if (signal.aborted) reject(signal.reason);
        signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      }),
    ]);
  }

  async result(options: { signal?: AbortSignal } = {}): Promise<CallToolResult> {
    const outcome = await this.outcome(options);
    if ("result" in outcome) return outcome.result;
    throw outcome.error;
  }

  /** `tasks/cancel` (X-CANCEL-1: an ack, also on a terminal task), then the task as it now reads. */
  async cancel(options: { signal?: AbortSignal } = {}): Promise<RemoteTaskInfo> {
    this.options.onLifecycle({ type: "cancel", taskId: this.id });
    await this.send(METHOD.tasksCancel, { taskId: this.id }, options.signal);
    try {
      return await this.status(options);
    } catch (error) {
      // A receiver may drop a cancelled task at once: the ack was the answer.
      if (!(error instanceof RemoteError)) throw error;
      const now = new Date().toISOString();
      const cancelled: RemoteTaskInfo = {
        ...(this.latest ?? { taskId: this.id, createdAt: now, ttl: null }),
        status: "cancelled",
        lastUpdatedAt: now,
      };
      this.observe({ task: cancelled });
      return cancelled;
    }
  }

  dispose(): void {
    this.stop.abort(new Error("The task handle was disposed"));
    for (const wake of [...this.wakers]) wake();
  }

  /** Polls to the end, answering what the task asks on the way (X-UPD-10: the answer resumes it). */
  private async follow(): Promise<TaskOutcome<CallToolResult>> {
    const signal = this.stop.signal;
    for (;;) {
      const detail = await this.fetch(signal);
      const outcome = this.outcomeOf(detail);
      if (outcome) return outcome;
      if (detail.task.status === "input_required" && this.options.answerInput && detail.inputRequests) {
        const refusal = this.refusalIn(detail);
        if (refusal) throw refusal;
        const open = Object.keys(detail.inputRequests).filter((key) => !this.answered.has(key));
        if (open.length > 0) {
          await answerInputs(detail.inputRequests, this.options.handlers, {
            relatedTaskId: this.id,
            signal,
            skip: this.answered,
            onAnswer: async (key, answer) => {
              this.answered.add(key);
              try {
                await this.send(METHOD.tasksUpdate, { taskId: this.id, inputResponses: { [key]: answer } }, signal);
              } catch (error) {
                // An answer the receiver refused (-32602: it does not fit the question) leaves the
                // question open (X-UPD-4): the next wait asks the handler again.
                if (error instanceof RemoteError) this.answered.delete(key);
                throw error;
              }
            },
          }).catch((error: unknown) => {
            // A question the handler refused is not put to it again by this handle (it would
            // refuse at every poll): while the task waits for it, each wait ends with the refusal.
            const key = open.sort().find((asked) => !this.answered.has(asked));
            if (error instanceof InputRefusedError && key !== undefined) this.refused.set(key, error);
            throw error;
          });
          continue; // read-your-writes (X-CONF-2): the next tasks/get shows what the answers did
        }
      }
      await this.sleep(this.intervalMs(), signal);
    }
  }

  private outcomeOf({ task, result, error }: DetailedTask): TaskOutcome<CallToolResult> | null {
    switch (task.status) {
      case "completed": {
        // X-TASK-5: a tool result with isError is `completed` here; callers read it as 2025-11-25 does (T-LIFE-4).
        const value = result ?? { content: [] };
        return value.isError === true ? { status: "failed", result: value } : { status: "completed", result: value };
      }
      case "failed":
        return {
          status: "failed",
          error: new RemoteError(error?.code ?? RpcCode.InternalError, error?.message ?? "Internal error", error?.data, this.id),
        };
      case "cancelled":
        return { status: "cancelled", error: new TaskCancelledError(this.id, task.statusMessage) };
      default:
        return null;
    }
  }

  private async fetch(signal: AbortSignal | undefined): Promise<DetailedTask> {
    const raw = await this.send(METHOD.tasksGet, { taskId: this.id }, signal);
    const detail = readDetailedTask(raw);
    if (!detail) throw new ConnectionError("The server answered tasks/get with something that is not a Task", RpcCode.InternalError);
    this.observe(detail);
    return this.detail ?? detail;
  }

  private async send(method: string, params: Record<string, unknown>, signal: AbortSignal | undefined): Promise<Record<string, unknown>> {
    try {
      return await this.options.connection.request(method, params, {
        declareTasks: true,
        capabilities: capabilitiesOf(this.options.handlers),
        ...(signal !== undefined && { signal }),
      });
    } catch (error) {
      if (error instanceof RemoteError && error.taskId === null) throw new RemoteError(error.code, error.message, error.data, this.id);
      throw error;
    }
  }

  /** @param read a read of the caller's (status(), updates(), a wait), which starts answering the task's questions. */
  private observe(detail: DetailedTask, read = true): void {
    const task = detail.task;
    const previous = this.latest;
    // Terminal statuses never move (X-TASK-3): an older answer must not hide the end.
    if (previous && isTerminalStatus(previous.status) && !isTerminalStatus(task.status)) return;
    this.latest = task;
    this.detail = detail;
    const progress = task.progress ? JSON.stringify(task.progress) : "";
    if (task.progress && progress !== this.lastProgress) {
      this.lastProgress = progress;
      this.options.onProgress?.(task.progress);
    }
    // As under 2025-11-25 (T-INPUT-3): the receiver waits for us, so whichever read saw it —
    // updates(), status() — starts answering, and a caller that only follows updates() gets past
    // input_required. The wait's own failure is the next outcome()'s to report.
    if (
      read &&
      task.status === "input_required" &&
      this.options.answerInput &&
      this.waiting === null &&
      !this.stop.signal.aborted &&
      !this.refusalIn(detail)
    )
      void this.outcome().catch(() => {});
    const key = `${task.status}\u0000${task.statusMessage ?? ""}`;
    if (key !== this.lastLogged) {
      this.lastLogged = key;
      this.options.onLifecycle({
        type: "status",
        taskId: this.id,
        status: task.status,
        ...(task.statusMessage !== undefined && { statusMessage: task.statusMessage }),
      });
      for (const wake of [...this.wakers]) wake();
    }
  }

  /** The refusal of a question the task still waits for, when this handle's handler refused one. */
  private refusalIn(detail: DetailedTask): InputRefusedError | undefined {
    if (this.refused.size === 0 || !detail.inputRequests) return undefined;
    for (const key of Object.keys(detail.inputRequests)) {
      const refusal = this.refused.get(key);
      if (refusal) return refusal;
    }
    return undefined;
  }

  private intervalMs(): number {
    return Math.max(MIN_POLL_MS, this.latest?.pollInterval ?? this.options.defaultPollIntervalMs ?? 1000);
  }

  private sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.wakers.delete(finish);
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = (): void => {
        clearTimeout(timer);
        this.wakers.delete(finish);
        reject(signal?.reason);
      };
      const timer = setTimeout(finish, ms);
      this.wakers.add(finish);
      if (signal?.aborted) return onAbort();
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
}
