import { TaskError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { TaskRecord } from "../core/task.js";
import type { EventBus } from "../events/event-bus.js";
import { isCheckpointStore } from "../store/checkpoint-store.js";
import type { Claim } from "../store/claim.js";
import { StoreError } from "../store/store-rules.js";
import type { TaskStore } from "../store/task-store.js";
import { isWaitStore, type WaitOutcome, type WaitRecord, type WaitStore } from "../store/wait-store.js";
import { claimFields } from "../store/claim.js";
import type { RunJournal } from "./run-journal.js";
import { retryOnStorageCondition } from "./storage-retry.js";
import type { TaskTracing, TracedWait, WaitBegan, WaitEnded } from "./task-tracing.js";

/** The slots of the claim loop a run holds one of (absent: handlers run without a slot limit). */
export interface RunSlots {
  release(taskId: string): void;
  reacquire(taskId: string): Promise<void>;
}

/** What a handler's `waitForEvent` resolves with. */
export type EventWaitResult = { timedOut: false; payload: unknown } | { timedOut: true };

interface RunWaitsDeps {
  store: TaskStore;
  bus: EventBus;
  logger: Logger;
  now: () => number;
  slots: RunSlots | null;
  /** Told where each wait begins and ends (the wait's span). */
  tracing: TaskTracing;
  /** A wait of this process was registered: the timer loop looks at `dueAt` sooner than its next read. */
  registered(dueAt: number | null): void;
  /** A parked task was queued again here: whoever claims should look. */
  requeued(taskId: string): void;
}

/** A wait re-reads its outcome at least this often, in case the wake-up event was missed. */
const BACKSTOP_MS = 30_000;

/** The longest event name, and the characters one may hold (a task id fits, with a prefix). */
export const EVENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,199}$/;

/**
 * One run's waits that hold no slot (docs/durable-execution.md, Waiting): its questions, timers
 * and event waits. While the handler waits, its slot goes to other work. A run of a replayable
 * tool (recovery "resume") whose only pending work is the wait is parked instead: the wait is
 * stored, the lease dropped, and the handler's call is let go — the promise it awaits never
 * settles, so nothing of the run stays reachable — and the task is queued again when the wait is
 * satisfied, to be replayed by any node. {@link parked} resolves when that happens, so the run
 * ends without an outcome.
 */
export class RunWaits {
  /** Steps and waits of the handler in progress: a run parks only when its wait is the only one. */
  private busy = 0;
  /** Never parked: the handler has untracked work of its own in flight. */
  private pinned = false;
  private parkNow: (() => void) | null = null;
  /** Resolves when the run was parked: its handler is let go, its task waits in the store. */
  readonly parked: Promise<void>;
  private readonly waitStore: (TaskStore & WaitStore) | null;

  constructor(
    private readonly deps: RunWaitsDeps,
    private readonly task: TaskRecord,
    private readonly journal: RunJournal,
    private readonly signal: AbortSignal,
    private readonly claim: Claim | undefined,
  ) {
    this.parked = new Promise<void>((resolve) => (this.parkNow = resolve));
    this.waitStore = isWaitStore(deps.store) && isCheckpointStore(deps.store) ? deps.store : null;
  }

  /** This run is never parked (see TaskContext.keepInMemory). */
  keepInMemory(): void {
    this.pinned = true;
  }

  /** Counts a step in progress (a run with one never parks: the step's work is in this process). */
  async around<T>(fn: () => Promise<T>): Promise<T> {
    this.busy++;
    try {
      return await fn();
    } finally {
      this.busy--;
    }
  }

  /** `ctx.sleep`: resolves at `until` (ms since the epoch), durably where the store keeps waits. */
  async sleep(until: number): Promise<void> {
    if (!Number.isFinite(until)) throw new TypeError("ctx.sleep: the time must be a finite number of milliseconds");
    const key = this.journal.waitKey("$sleep");
    if (this.waitStore === null) return this.sleepInMemory(until);
    const label = `Sleeping until ${new Date(until).toISOString()}`;
    await this.wait(this.waitStore, { key, kind: "timer", eventName: null, dueAt: until, afterSeq: 0 }, label, { reason: "sleep", until });
  }

  /** `ctx.waitForEvent`: the next event of the task's owner with this name, or a timeout at `timeoutAt`. */
  async waitForEvent(name: string, timeoutAt: number | null): Promise<EventWaitResult> {
    if (typeof name !== "string" || !EVENT_NAME.test(name)) {
      throw new TypeError("ctx.waitForEvent: an event name is 1–200 letters, digits and . _ : / @ -, starting with a letter or digit");
    }
    if (timeoutAt !== null && !Number.isFinite(timeoutAt)) throw new TypeError("ctx.waitForEvent: timeoutMs must be a finite number");
    const store = this.waitStore;
    if (store === null) throw new TaskError("internal", "Waiting for events needs a task store that keeps waits");
    const prefix = `$event:${name}`;
    const key = this.journal.waitKey(prefix);
    // One event is seen once: a later wait for the same name only takes events after the one the
    // earlier wait of this run consumed.
    const earlier = await this.journal.earlierWaitOutcome(prefix, key);
    const afterSeq = earlier?.fired === "event" ? earlier.seq : 0;
    const until = timeoutAt === null ? "" : ` until ${new Date(timeoutAt).toISOString()}`;
    const outcome = await this.wait(
      store,
      { key, kind: "event", eventName: name, dueAt: timeoutAt, afterSeq },
      `Waiting for ${name}${until}`,
      { reason: "event", eventName: name, ...(timeoutAt !== null && { until: timeoutAt }) },
    );
    return outcome.fired === "event" ? { timedOut: false, payload: outcome.payload } : { timedOut: true };
  }

  /**
   * A question was put to the requestor and is still unanswered: parks the run when it may
   * (see the class), else gives the slot back until `answered` says so. `answered` reads the store.
   * `question`: its input request's id, method and time of asking (the wait's span).
   */
  async awaitAnswer(
    answered: () => Promise<boolean>,
    wakeUp: (resolve: () => void) => () => void,
    question: { id: string; method: string; askedAt: number },
  ): Promise<void> {
    this.busy++;
    try {
      await this.awaitAnswerCounted(answered, wakeUp, question);
    } finally {
      this.busy--;
    }
  }

  /** A question an earlier run asked and that was answered while the task was parked: its wait ends here. */
  async questionReplayed(question: { id: string; method: string }): Promise<void> {
    await this.traceResumed(`$input:${question.id}`, { reason: "question", method: question.method }, this.deps.now(), "answer");
  }

  private async awaitAnswerCounted(
    answered: () => Promise<boolean>,
    wakeUp: (resolve: () => void) => () => void,
    question: { id: string; method: string; askedAt: number },
  ): Promise<void> {
    const traced: TracedWait = { reason: "question", method: question.method };
    const key = `$input:${question.id}`;
    const began = this.traceBegin(traced, question.askedAt);
    let noted = false;
    if (this.mayPark(1)) {
      noted = await this.noteForResume(key, began);
      await this.park(async () => {
        if (!(await answered())) return false;
        const store = this.waitStore as WaitStore;
        if (await store.wakeAnswered(this.task.id, this.deps.now())) this.deps.requeued(this.task.id);
        return true;
      });
    }
    await this.idle(answered, wakeUp);
    await this.traceEndHere(key, traced, began, noted, { at: this.deps.now(), outcome: "answer" });
  }

  private async wait(
    store: TaskStore & WaitStore,
    shape: Pick<WaitRecord, "key" | "kind" | "eventName" | "dueAt" | "afterSeq">,
    label: string,
    traced: TracedWait,
  ): Promise<WaitOutcome> {
    this.signal.throwIfAborted();
    const kept = await this.journal.waitOutcome(shape.key);
    if (kept) {
      await this.traceResumed(shape.key, traced, kept.at, kept.fired);
      return kept;
    }
    this.busy++;
    try {
      const record: WaitRecord = {
        ...shape,
        taskId: this.task.id,
        owner: this.task.owner,
        since: this.task.createdAt,
        createdAt: this.deps.now(),
      };
      const began = this.traceBegin(traced, record.createdAt);
      const immediate = await this.durable(() => store.registerWait(record, this.claim), "wait");
      if (immediate) {
        await this.traceEndHere(shape.key, traced, began, false, {
          at: Math.max(immediate.at, record.createdAt),
          outcome: immediate.fired,
        });
        return immediate;
      }
      this.deps.registered(record.dueAt);
      await store
        .annotate(this.task.id, { statusMessage: label, now: this.deps.now(), ...(this.claim && { claim: this.claim }) })
        .catch(() => false);
      const outcome = async (): Promise<WaitOutcome | null> => this.storedOutcome(store, shape.key);
      let noted = false;
      if (this.mayPark(1)) {
        noted = await this.noteForResume(shape.key, began);
        await this.park(async () => {
          if ((await outcome()) === null) return false;
          // Satisfied before the park took hold: nobody else queues it again.
          if (await store.setWaitMode(this.task.id, null)) this.deps.requeued(this.task.id);
          return true;
        });
      }
      let found: WaitOutcome | null = null;
      await this.idle(
        async () => (found = await outcome()) !== null,
        (resolve) => this.onWake(resolve, shape.dueAt),
      );
      await store
        .annotate(this.task.id, { statusMessage: null, now: this.deps.now(), ...(this.claim && { claim: this.claim }) })
        .catch(() => false);
      const satisfied = found as unknown as WaitOutcome;
      await this.traceEndHere(shape.key, traced, began, noted, { at: Math.max(satisfied.at, record.createdAt), outcome: satisfied.fired });
      return satisfied;
    } finally {
      this.busy--;
    }
  }

  /** Tells the tracer a wait begins in this run; null when nothing is traced. */
  private traceBegin(wait: TracedWait, at: number): WaitBegan | null {
    const note = this.deps.tracing.waitBegan?.(this.task, wait);
    return note === undefined ? null : { at, note };
  }

  /**
   * Before a park: stores the wait's start and the tracer's note (`$trace:<key>`) for the run that
   * resumes the task. Only when something is traced; the first run's note is kept. True if stored.
   */
  private async noteForResume(key: string, began: WaitBegan | null): Promise<boolean> {
    const store = this.waitStore;
    if (began === null || store === null || !isCheckpointStore(store)) return false;
    return store
      .saveCheckpoint(this.task.id, `$trace:${key}`, { value: began }, this.deps.now(), this.claim)
      .then(() => true)
      .catch(() => false);
  }

  /** A wait ended in the run that began it (not parked after all, or never parkable). */
  private async traceEndHere(key: string, wait: TracedWait, began: WaitBegan | null, noted: boolean, ended: WaitEnded): Promise<void> {
    if (began === null) return;
    // A note was stored for a park that did not hold: mark the wait told, so no replay tells it again.
    if (noted && !(await this.markTold(key))) return;
    this.deps.tracing.waitEnded?.(this.task, wait, began, ended, false);
  }

  /**
   * A replayed run found the wait `key` satisfied: when an earlier run parked on it with a note,
   * the first run past it tells the tracer of the whole wait, from the note's start to `at`.
   */
  private async traceResumed(key: string, wait: TracedWait, at: number, outcome: WaitEnded["outcome"]): Promise<void> {
    if (this.deps.tracing.waitEnded === undefined) return;
    const began = (await this.journal.keptValue(`$trace:${key}`).catch(() => undefined)) as WaitBegan | undefined;
    if (began === undefined) return;
    // Told by an earlier replay already (its mark was in the store when this run read it): no write.
    if ((await this.journal.keptValue(`$traced:${key}`).catch(() => undefined)) !== undefined) return;
    if (!(await this.markTold(key))) return;
    this.deps.tracing.waitEnded(this.task, wait, began, { at: Math.max(at, began.at), outcome }, true);
  }

  /** Marks the wait `key` as told to the tracer (`$traced:<key>`): true for the one run whose mark was the first. */
  private async markTold(key: string): Promise<boolean> {
    const store = this.deps.store;
    if (!isCheckpointStore(store)) return false;
    return store.saveCheckpoint(this.task.id, `$traced:${key}`, { value: true }, this.deps.now(), this.claim).catch(() => false);
  }

  /** Whether this run may be let go now: replayable, the store keeps waits, nothing else of it in progress. */
  private mayPark(own: number): boolean {
    return !this.pinned && this.journal.resumable && this.waitStore !== null && this.busy <= own && !this.signal.aborted;
  }

  /**
   * Parks the task, then checks whether what it waits for arrived before the park took hold
   * (`recheck` queues it again if so). Never returns once parked: the handler is let go.
   */
  private async park(recheck: () => Promise<boolean>): Promise<void> {
    const store = this.waitStore as TaskStore & WaitStore;
    let parked: boolean;
    try {
      parked = await store.setWaitMode(this.task.id, "parked", this.claim);
    } catch (err) {
      this.deps.logger.warn({ taskId: this.task.id, err }, "could not park a waiting task; it waits in memory");
      return;
    }
    // Not parked: the task ended meanwhile or this run's claim was superseded; the wait in memory
    // ends with the abort that follows.
    if (!parked) return;
    this.deps.logger.debug({ taskId: this.task.id }, "task parked: its handler is unloaded until what it waits for arrives");
    await recheck().catch((err: unknown) =>
      this.deps.logger.warn(
        { taskId: this.task.id, err },
        "could not check a parked task's wait; the timer loop or the next event wakes it",
      ),
    );
    this.parkNow?.();
    await new Promise<never>(() => {});
  }

  /**
   * Waits in this process without a slot until `ready` holds, woken by `wakeUp`'s events and a
   * backstop re-read; then takes a slot again.
   */
  private async idle(ready: () => Promise<boolean>, wakeUp: (resolve: () => void) => () => void): Promise<void> {
    const { slots, store } = this.deps;
    let released = false;
    try {
      for (;;) {
        this.signal.throwIfAborted();
        let wake: () => void = () => {};
        const woken = new Promise<void>((resolve) => (wake = resolve));
        const stop = wakeUp(wake);
        const onAbort = (): void => wake();
        this.signal.addEventListener("abort", onAbort);
        const backstop = setTimeout(wake, BACKSTOP_MS);
        try {
          if (await this.durable(ready, "read")) return;
          if (!released) {
            released = true;
            slots?.release(this.task.id);
            if (isWaitStore(store)) await store.setWaitMode(this.task.id, "memory", this.claim).catch(() => false);
          }
          await woken;
        } finally {
          clearTimeout(backstop);
          stop();
          this.signal.removeEventListener("abort", onAbort);
        }
      }
    } finally {
      if (released) {
        if (isWaitStore(store)) await store.setWaitMode(this.task.id, null, this.claim).catch(() => false);
        if (slots && !this.signal.aborted) await raceAbort(slots.reacquire(this.task.id), this.signal);
      }
    }
  }

  /** Wakes on this task's `wake` events, and at `dueAt` when it is near. */
  private onWake(resolve: () => void, dueAt: number | null): () => void {
    const stop = this.deps.bus.onTask(this.task.id, (event) => {
      if (event.type === "wake") resolve();
    });
    const delay = dueAt === null ? null : dueAt - this.deps.now();
    const timer = delay !== null && delay < BACKSTOP_MS ? setTimeout(resolve, Math.max(0, delay) + 50) : null;
    return () => {
      stop();
      if (timer) clearTimeout(timer);
    };
  }

  private async storedOutcome(store: WaitStore & TaskStore, key: string): Promise<WaitOutcome | null> {
    if (!isCheckpointStore(store)) return null;
    const found = (await store.checkpoints(this.task.id)).find((c) => c.name === key);
    if (found === undefined) return null;
    return (found.value as { value?: WaitOutcome }).value ?? null;
  }

  /** A sleep where the store keeps no waits: a timer of this process, without a slot. */
  private async sleepInMemory(until: number): Promise<void> {
    await this.idle(
      async () => this.deps.now() >= until,
      (resolve) => {
        const timer = setTimeout(resolve, Math.max(0, until - this.deps.now()));
        return () => clearTimeout(timer);
      },
    );
  }

  /** A write or read of the wait goes on across a store unreachable for a while, as questions do. */
  private async durable<T>(op: () => Promise<T>, what: string): Promise<T> {
    const { logger } = this.deps;
    const claim = this.claim;
    try {
      return await retryOnStorageCondition(
        op,
        logger,
        { taskId: this.task.id, wait: what },
        claim ? { while: () => !this.signal.aborted, signal: this.signal } : {},
      );
    } catch (error) {
      if (claim && error instanceof StoreError && error.reason === "claim_lost") {
        logger.warn({ ...claimFields(this.task.id, claim), dropped: what }, "write of a superseded claim dropped: the wait was not stored");
        throw new TaskError("internal", "This run of the task lost its lease: another run holds the task now");
      }
      throw error;
    }
  }
}

/** Resolves with `promise`, or as soon as `signal` aborts. */
function raceAbort(promise: Promise<void>, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      signal.removeEventListener("abort", done);
      resolve();
    };
    signal.addEventListener("abort", done);
    void promise.then(done);
  });
}
