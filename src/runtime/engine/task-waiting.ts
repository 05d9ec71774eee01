import { isWaitStore } from "../../store/wait-store.js";
import { statusEvent } from "../../events/task-event.js";
import type { AbortWatch } from "../../core/abort-watch.js";
import type { Caller } from "../../core/caller.js";
import { checkedAnswer } from "../../core/form-answer.js";
import { TaskError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { storageCondition } from "../../core/storage-condition.js";
import { isTerminal } from "../../core/task-status.js";
import { isExpired, type InputRequest, type TaskOutcome, type TaskRecord } from "../../core/task.js";
import type { EventBus } from "../../events/event-bus.js";
import type { TaskEvent } from "../../events/task-event.js";
import type { TaskStore } from "../../store/task-store.js";
import { AwaitedTasks } from "../awaited-tasks.js";
import type { EngineObserver } from "../engine-observer.js";
import type { EngineOperation } from "../engine-operation.js";
import { FetchedMarkWriter } from "../fetched-mark-writer.js";
import type { CallerLimits } from "../limits/caller-limits.js";
import { checkTaskId, type TaskLookups } from "./task-lookups.js";
import { TaskWaiters, Waiter } from "./task-waiters.js";

/**
 * One step of {@link TaskWaiting.watch}: the task as it is now, and why it was read again.
 */
export interface TaskChange {
  task: TaskRecord;
  /** False for the first read (the request's own lookup); true for every read after a wake-up. */
  woken: boolean;
  /**
   * An event said the task's questions may have changed since the previous step (one was queued,
   * or another node asked for a look): an era that delivers questions should look at
   * {@link TaskWaiting.pendingInputs}. A task in `input_required` always may have some.
   */
  inputsMayHaveChanged: boolean;
}

interface WaitingDeps {
  store: TaskStore;
  bus: EventBus;
  logger: Logger;
  observer: EngineObserver;
  limits: CallerLimits;
  lookups: TaskLookups;
  now: () => number;
  keepFinishedMs: number;
  /** The re-read of a waiter when no event came (events are the mechanism; this is the backstop). */
  backstopMs: number;
}

/** `retryAfterMs` of the refusal of new tasks while draining: a balancer's next pick, or the restarted process. */
export const DRAINING_RETRY_AFTER_MS = 1000;

/**
 * What waits on a task and what wakes it: following a task until it ends ({@link watch}), the
 * result request's wait for the outcome, the task's open questions and their answers. Waits are
 * woken by the bus's events, never by polling; close() answers every wait still blocked.
 */
export class TaskWaiting {
  /** Aborted by close(): blocked waits for an outcome answer instead of hanging until the socket dies. */
  private readonly closing = new AbortController();
  /** Watches in progress, so close() can let their answers go out first. */
  private waiters = 0;
  private waitersDrained: (() => void) | null = null;
  /** Marks of fetched results, held briefly and written together; one fetched again writes nothing. */
  private readonly fetchedMarks: FetchedMarkWriter;
  /** Tasks a request of this process follows ({@link watch}): their status writes commit at once. */
  private readonly awaited = new AwaitedTasks();
  /** Every wait in progress, by task: what wakes it. */
  private readonly waiting: TaskWaiters;

  constructor(private readonly deps: WaitingDeps) {
    this.fetchedMarks = new FetchedMarkWriter(deps.store, deps.logger);
    this.waiting = new TaskWaiters(deps.bus, deps.backstopMs);
  }

  /** Whether a request of this process follows the task now. */
  isAwaited(taskId: string): boolean {
    return this.awaited.has(taskId);
  }

  /**
   * Follows a task until it ends (T-RES-3): yields it at once, then again whenever an event says
   * it changed (woken by events, not by polling; a long backstop re-reads in case one was lost),
   * the last time in its terminal status. The first read is the request's lookup: limits, audit,
   * "not found" for an unknown or foreign id (T-SEC-3). Ends with an error when `signal` aborts or
   * the engine closes, so a waiter always gets an answer.
   */
  async *watch(
    taskId: unknown,
    caller: Caller,
    signal: AbortWatch,
    operation: EngineOperation = "watch",
  ): AsyncGenerator<TaskChange, void, undefined> {
    const waiter = this.begin(taskId, signal);
    try {
      let change = await this.first(waiter, caller, signal, operation);
      for (;;) {
        yield change;
        if (isTerminal(change.task.status)) return;
        this.goOn(signal);
        await this.waiting.sleep(waiter);
        change = await this.woken(waiter, change.task, caller, signal);
      }
    } finally {
      this.end(waiter, signal);
    }
  }

  /**
   * The steps of {@link watch}, each handed to `onStep` (awaited before the next wait), in one
   * frame instead of a generator and the loop that consumes it: a subscription that follows a task
   * for as long as it runs keeps only this call suspended while it waits. Settles after the
   * terminal step; rejects as `watch` throws (an abort, the engine's close, a failed read) or with
   * whatever `onStep` throws.
   */
  async follow(
    taskId: unknown,
    caller: Caller,
    signal: AbortWatch,
    onStep: (change: TaskChange) => void | Promise<void>,
    operation: EngineOperation = "watch",
  ): Promise<void> {
    const waiter = this.begin(taskId, signal);
    try {
      let change = await this.first(waiter, caller, signal, operation);
      for (;;) {
        await onStep(change);
        if (isTerminal(change.task.status)) return;
        this.goOn(signal);
        await this.waiting.sleep(waiter);
        change = await this.woken(waiter, change.task, caller, signal);
      }
    } finally {
      this.end(waiter, signal);
    }
  }

  /**
   * Waits until the task is terminal (T-RES-3) and returns it; its outcome is the result request's
   * answer (T-RES-2, T-RES-4). `onChange` sees every step before that (an era delivers the task's
   * questions from it, T-INPUT-3); whatever it throws ends the wait with that error. The same
   * steps as {@link watch}, in one frame: a blocked result request is the most common wait there
   * is, and each suspended frame of its chain is kept for as long as it waits.
   */
  async awaitOutcome(
    taskId: unknown,
    caller: Caller,
    signal: AbortWatch,
    onChange?: (change: TaskChange) => void | Promise<void>,
  ): Promise<TaskRecord> {
    const { logger, observer, now } = this.deps;
    const waiter = this.begin(taskId, signal);
    let waiting = false;
    try {
      let change = await this.first(waiter, caller, signal, "result");
      while (!isTerminal(change.task.status)) {
        if (!waiting) {
          waiting = true;
          observer.resultsWaiting?.(1);
        }
        await onChange?.(change);
        this.goOn(signal);
        await this.waiting.sleep(waiter);
        change = await this.woken(waiter, change.task, caller, signal);
      }
      const { task } = change;
      logger.info(
        { audit: "retrieved", taskId: task.id, owner: caller.owner, operation: "result", peer: caller.peer ?? null },
        "task result retrieved",
      );
      this.delivered(task);
      if (change.woken) observer.resultWoken(task, Math.max(0, now() - task.updatedAt));
      return task;
    } finally {
      this.end(waiter, signal);
      if (waiting) observer.resultsWaiting?.(-1);
    }
  }

  /** A wait begins: subscribed before the first read, so no event between a read and the wait after it is missed. */
  private begin(taskId: unknown, signal: AbortWatch): Waiter {
    const waiter = new Waiter(checkTaskId(taskId));
    this.waiting.add(waiter);
    signal.addEventListener("abort", waiter);
    this.waiters++;
    // Each wake-up is armed before the read it follows, so an event during a read is not lost.
    waiter.arm();
    return waiter;
  }

  /** The first step: the request's lookup (limits, audit, "not found" for an unknown or foreign id). */
  private async first(waiter: Waiter, caller: Caller, signal: AbortWatch, operation: EngineOperation): Promise<TaskChange> {
    const id = waiter.taskId;
    const hinted = waiter.takeHint();
    const task = await this.deps.lookups.lookup({ caller, operation, taskId: id }, () => this.reread(id, caller.owner, signal));
    if (!isTerminal(task.status)) {
      this.awaited.enter(id);
      waiter.awaiting = true;
    }
    return { task, woken: false, inputsMayHaveChanged: hinted || task.status === "input_required" };
  }

  /**
   * Whether a wait goes on after a step: not once the engine closes or the request is abandoned.
   * Anything that happened while the consumer looked at the last step has already woken it.
   * Nothing is due at the ttl: a task running then reads as it is until the sweeper fails it, and
   * that failure is an event like any end.
   */
  private goOn(signal: AbortWatch): void {
    // Retryable, as a drain's refusal of new work is: the task goes on (handed back, or re-run at the next start).
    if (this.closing.signal.aborted) {
      throw new TaskError("unavailable", "The server is shutting down; ask again once it is back", {
        data: { reason: "draining", retryAfterMs: DRAINING_RETRY_AFTER_MS },
      });
    }
    if (signal.aborted) throw new TaskError("internal", "The request was abandoned");
  }

  /** The step after `task` (not terminal), once the waiter was woken: the task read again. */
  private async woken(waiter: Waiter, task: TaskRecord, caller: Caller, signal: AbortWatch): Promise<TaskChange> {
    waiter.arm();
    const hinted = waiter.takeHint();
    // Read again before judging a close or an abort: the task may have ended meanwhile (a close
    // fails its own running tasks first), and then its waiter gets the outcome.
    const ended = waiter.ended;
    const now = ended ? endedAs(task, ended, this.deps.now(), this.deps.keepFinishedMs) : await this.reread(task.id, caller.owner, signal);
    return { task: now, woken: true, inputsMayHaveChanged: hinted || now.status === "input_required" };
  }

  /** The wait is over (answered, abandoned, failed). */
  private end(waiter: Waiter, signal: AbortWatch): void {
    this.waiting.remove(waiter);
    if (waiter.awaiting) this.awaited.leave(waiter.taskId);
    signal.removeEventListener("abort", waiter);
    if (--this.waiters === 0) this.waitersDrained?.();
  }

  /**
   * Records that a finished task's result went to its requestor (a result request's answer, or a
   * read that carries the result), so its retention's end is not counted as a result expired
   * unread. Best effort: the answer does not wait for the write, nor fail with it.
   */
  delivered(task: TaskRecord): void {
    if (isTerminal(task.status)) this.fetchedMarks.fetched(task.id, this.deps.now());
  }

  /**
   * A wait that ends unanswered here because another path of the binding answers the same request
   * (which counts it again): gives back its operation token, so one request counts once.
   */
  handedOn(taskId: string, caller: Caller): void {
    this.deps.limits.handedOn({ caller, operation: "result", taskId });
  }

  /**
   * The questions a task has asked its requestor that are still unanswered, oldest first: "not
   * found" for a task the caller may not see (T-SEC-3), like every lookup.
   */
  async pendingInputs(taskId: unknown, caller: Caller): Promise<InputRequest[]> {
    const task = await this.deps.lookups.read(taskId, caller.owner);
    return this.deps.store.pendingInputs(task.id);
  }

  /** Audits that one of a task's questions was put to its requestor (T-SEC-5). */
  inputDelivered(task: TaskRecord, input: InputRequest, caller: Caller): void {
    this.deps.logger.info(
      { audit: "input_requested", taskId: task.id, owner: task.owner, method: input.method, peer: caller.peer ?? null },
      "input request delivered",
    );
  }

  /**
   * Records the requestor's answer to one of a task's questions and wakes the handler waiting for
   * it. Owner-checked like a lookup; false when the question is unknown or already answered (the
   * first answer wins), so a late or repeated answer changes nothing. Every path that answers a
   * question comes here, so here the answer to a form is checked against the question's
   * `requestedSchema`: one that does not fit is refused (-32602 naming the field) and the
   * question stays open.
   */
  async respond(taskId: unknown, caller: Caller, inputId: string, answer: TaskOutcome): Promise<boolean> {
    const { store, bus, logger, lookups } = this.deps;
    const task = await lookups.read(taskId, caller.owner);
    const input = (await store.pendingInputs(task.id)).find((pending) => pending.id === inputId);
    if (!input) return false;
    if (!(await store.answerInput(task.id, inputId, checkedAnswer(input, answer)))) return false;
    bus.publish({ type: "answer", taskId: task.id, inputId });
    // A parked task has no handler to hear the answer: once nothing else is pending it is queued
    // again (back in `working`), for any node to replay with its answers.
    if (isWaitStore(store) && (await store.wakeAnswered(task.id, this.deps.now()))) {
      const woken = await store.get(task.id, { any: true });
      if (woken) bus.publish(statusEvent(woken));
      bus.publish({ type: "wake", taskId: task.id });
    }
    logger.info(
      { audit: "input_answered", taskId: task.id, owner: task.owner, method: input.method, peer: caller.peer ?? null },
      "input request answered",
    );
    return true;
  }

  /**
   * The engine closes: every wait still blocked is answered (its task failed by the close, or told
   * to come back), given up to two seconds for those answers to go out; then the fetched marks
   * are written, before the store can close.
   */
  async close(): Promise<void> {
    this.closing.abort();
    this.waiting.wakeAll();
    if (this.waiters > 0) {
      await Promise.race([
        new Promise<void>((resolve) => (this.waitersDrained = resolve)),
        new Promise<void>((resolve) => setTimeout(resolve, 2000).unref()),
      ]);
    }
    await this.fetchedMarks.flush();
  }

  /**
   * A waiter's read. A store that cannot be reached right now (a database restarting: the bus's
   * reconnection is often the wake-up) does not end the wait: the requestor is waiting anyway, so
   * the read is made again shortly, until the store answers, the request is abandoned or the
   * engine closes.
   */
  private async reread(id: string, owner: string | null, signal: AbortWatch): Promise<TaskRecord> {
    for (let delay = 100; ; delay = Math.min(delay * 2, 2000)) {
      try {
        return await this.deps.lookups.read(id, owner);
      } catch (error) {
        const condition = storageCondition(error);
        if (!condition || signal.aborted || this.closing.signal.aborted) throw error;
        this.deps.logger.debug(
          { taskId: id, reason: condition.reason, retryInMs: delay, err: error },
          "a waiter's read failed; reading again",
        );
        await new Promise<void>((resolve) => {
          const done = (): void => {
            clearTimeout(timer);
            signal.removeEventListener("abort", done);
            this.closing.signal.removeEventListener("abort", done);
            resolve();
          };
          const timer = setTimeout(done, delay);
          signal.addEventListener("abort", done);
          this.closing.signal.addEventListener("abort", done, { once: true });
        });
      }
    }
  }
}

/**
 * The task as its terminal transition left it, from the last read (fixed fields, ownership
 * already checked) and that transition's event (what it wrote). Expiry is judged as a read would.
 */
function endedAs(task: TaskRecord, event: Extract<TaskEvent, { type: "status" }>, now: number, keepFinishedMs: number): TaskRecord {
  const ended: TaskRecord = {
    ...task,
    status: event.status,
    statusMessage: event.statusMessage,
    updatedAt: event.updatedAt,
    outcome: event.outcome ?? null,
  };
  if (isExpired(ended, now, keepFinishedMs)) throw TaskError.expired();
  return ended;
}
