import type { Logger } from "../../core/logger.js";
import type { WaitStore, WokenTask } from "../../store/wait-store.js";
import { IntervalLoop } from "./interval-loop.js";

interface WaitTimersDeps {
  store: WaitStore;
  logger: Logger;
  now: () => number;
  /** Tasks a fired wait woke (parked ones are queued again): tell whoever runs or claims them. */
  woken(tasks: WokenTask[]): void;
  /** How long an emitted event is kept for a wait that starts after it (docs/limits.md). */
  eventWindowMs: number;
}

/** How often the loop looks whether a wait is due: timers fire within about this of their time. */
const TICK_MS = 250;
/** The earliest due time is read again at least this often (waits other nodes stored). */
const REREAD_MS = 1000;
/** Waits fired per statement; a second that is due for many fires them batch after batch. */
const BATCH = 500;
/** Old events are dropped this often. */
const EVENT_SWEEP_MS = 60_000;

/**
 * Fires durable timers and event timeouts when they are due (docs/durable-execution.md), on every
 * node: the store satisfies each wait exactly once however many nodes ask, so whichever asks first
 * fires it. Between reads it knows the earliest due time (its own registrations tell it at once),
 * so an idle node costs one indexed read a second, not a write.
 */
export class WaitTimers {
  private readonly loop: IntervalLoop;
  /** The earliest due time known (null: none; undefined: read it). */
  private next: number | null | undefined;
  private readAt = 0;
  private sweptAt = 0;

  constructor(private readonly deps: WaitTimersDeps) {
    this.loop = new IntervalLoop({
      run: () => this.pass(),
      intervalMs: TICK_MS,
      logger: deps.logger,
      failure: "firing due waits failed; will retry",
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): void {
    this.loop.stop();
  }

  /** A wait due at `dueAt` was stored here. */
  soon(dueAt: number | null): void {
    if (dueAt === null) return;
    if (this.next === null || (this.next !== undefined && dueAt < this.next)) this.next = dueAt;
  }

  /** One pass now (tests, and a start that wants what came due while the node was down fired at once). */
  runOnce(): Promise<void> {
    return this.loop.runOnce();
  }

  private async pass(): Promise<void> {
    const { store, now } = this.deps;
    const at = now();
    if (this.next === undefined || at - this.readAt >= REREAD_MS) {
      this.next = await store.nextDue();
      this.readAt = at;
    }
    if (this.next !== null && this.next <= at) {
      for (;;) {
        const woken = await store.fireDue(at, BATCH);
        if (woken.length > 0) this.deps.woken(woken);
        if (woken.length < BATCH) break;
      }
      this.next = undefined;
    }
    if (at - this.sweptAt >= EVENT_SWEEP_MS) {
      this.sweptAt = at;
      await store.dropEventsBefore(at - this.deps.eventWindowMs, 10_000);
    }
  }
}
