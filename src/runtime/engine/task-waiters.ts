import { isTerminal } from "../../core/task-status.js";
import type { EventBus, Unsubscribe } from "../../events/event-bus.js";
import type { TaskEvent } from "../../events/task-event.js";

type StatusEvent = Extract<TaskEvent, { type: "status" }>;

/** Backstop ticks per backstop period: a waiter's backstop comes after 1 to 1.25 periods. */
const TICKS_PER_BACKSTOP = 4;

/**
 * One request waiting on a task, and what it heard since its last read. It holds no timer and no
 * listener of its own: its task's one bus listener and the engine's one backstop sweep reach it
 * through {@link TaskWaiters}, and it is the listener of its request's abort itself
 * (`handleEvent`), so thousands of waiters cost a small record each.
 */
export class Waiter {
  /** An `input` (or `wake`) event came since the last read. */
  inputHint = false;
  /** The move to a terminal status, when its event carried the outcome: no read-back needed. */
  ended: StatusEvent | null = null;
  /** The sweep tick at which the backstop wakes it; -1 while it is not asleep. */
  due = -1;
  /** Counted among the tasks a request of this process awaits (from its lookup on, for a task still running). */
  awaiting = false;
  private resolve: (() => void) | null = null;
  private woke: Promise<void> = Promise.resolve();

  constructor(readonly taskId: string) {}

  /** Arms the next wake-up; armed before each read, so an event during the read is not lost. */
  arm(): void {
    this.woke = new Promise<void>((resolve) => (this.resolve = resolve));
  }

  /** Resolves the armed wake-up (again: nothing). */
  wake(): void {
    const resolve = this.resolve;
    this.resolve = null;
    this.due = -1;
    resolve?.();
  }

  /** The request's abort wakes it (an `AbortSignal` listener object). */
  handleEvent(): void {
    this.wake();
  }

  /** Whether an input hint came since the last call, clearing it. */
  takeHint(): boolean {
    const hinted = this.inputHint;
    this.inputHint = false;
    return hinted;
  }

  /** The armed wake-up. */
  get wakeUp(): Promise<void> {
    return this.woke;
  }

  /** What an event of its task says to it. */
  heard(event: TaskEvent): void {
    if (event.type === "input" || event.type === "wake") this.inputHint = true;
    if (event.type === "status" && event.outcome !== undefined && isTerminal(event.status)) this.ended = event;
    if (event.type === "status" || event.type === "input" || event.type === "wake") this.wake();
  }
}

/** The waiters of one task and its one bus subscription. */
interface TaskEntry {
  waiters: Waiter[];
  stop: Unsubscribe;
}

/**
 * Every waiter of one engine, by task: one bus listener per task however many requests wait on
 * it, and one backstop sweep (a timer that runs only while someone waits) in place of a timer per
 * wait. A waiter whose backstop is due — no event came for a backstop period — is woken to read
 * its task again, in case an event was lost.
 */
export class TaskWaiters {
  private readonly byTask = new Map<string, TaskEntry>();
  private tick = 0;
  private sweep: NodeJS.Timeout | null = null;

  constructor(
    private readonly bus: EventBus,
    private readonly backstopMs: number,
  ) {}

  /** Starts hearing the events of the waiter's task (before its first read). */
  add(waiter: Waiter): void {
    const id = waiter.taskId;
    const entry = this.byTask.get(id);
    if (entry) {
      entry.waiters.push(waiter);
      return;
    }
    const waiters = [waiter];
    this.byTask.set(id, {
      waiters,
      stop: this.bus.onTask(id, (event) => {
        // A copy: a waiter woken here may leave (and change the list) before the loop ends.
        for (const one of waiters.slice()) one.heard(event);
      }),
    });
    if (this.sweep === null) this.sweep = setInterval(() => this.sweepDue(), Math.max(1, this.backstopMs / TICKS_PER_BACKSTOP));
  }

  /** The waiter no longer waits. */
  remove(waiter: Waiter): void {
    const entry = this.byTask.get(waiter.taskId);
    if (!entry) return;
    const at = entry.waiters.indexOf(waiter);
    if (at >= 0) entry.waiters.splice(at, 1);
    if (entry.waiters.length > 0) return;
    entry.stop();
    this.byTask.delete(waiter.taskId);
    if (this.byTask.size === 0 && this.sweep !== null) {
      clearInterval(this.sweep);
      this.sweep = null;
    }
  }

  /** Waits for the waiter's armed wake-up: an event, an abort, the engine's close, or the backstop. */
  sleep(waiter: Waiter): Promise<void> {
    // Not an async function: nothing of this call is kept while the waiter sleeps.
    waiter.due = this.tick + TICKS_PER_BACKSTOP + 1;
    return waiter.wakeUp;
  }

  /** Wakes every waiter (the engine closes). */
  wakeAll(): void {
    for (const entry of this.byTask.values()) for (const waiter of entry.waiters) waiter.wake();
  }

  private sweepDue(): void {
    const tick = ++this.tick;
    for (const entry of this.byTask.values()) {
      for (const waiter of entry.waiters) if (waiter.due >= 0 && waiter.due <= tick) waiter.wake();
    }
  }
}
