import type { Logger } from "../core/logger.js";
import { isTerminal } from "../core/task-status.js";
import type { TaskEvent } from "../events/task-event.js";

/** What one claim statement answered. */
export interface ClaimAnswer<T> {
  /** The tasks claimed, each to run here. */
  tasks: T[];
  /** The claim took all it asked for: more may be waiting, so claim again at once. */
  more: boolean;
  /** Work may be left queued that a handler's end can let through (no free slot, a cap): the next handler to end claims. */
  full: boolean;
}

/** What differs between the claimers that share the loop: the single node's dispatcher and a cluster worker. */
export interface ClaimLoopOptions<T extends { id: string }> {
  /** Handlers run at once here; Infinity: as many as there are tasks. */
  slots: number;
  /** Most tasks one claim asks for, however many slots are free. */
  maxBatch: number;
  logger: Logger;
  /**
   * The claim statement for up to `free` tasks: the run queue's on a single node, a leased claim in
   * a cluster (which can also hand over what a lost answer leased here, through {@link ClaimLoop.adopt}).
   */
  claim(free: number): Promise<ClaimAnswer<T>>;
  /** A claim that threw (the loop is marked full, so the next handler to end tries again). */
  claimFailed(err: unknown): void;
  /** Runs one claimed task's handler (fenced by its claim in a cluster); settles when the run is over. */
  run(task: T): Promise<void>;
  /**
   * Whether "full" holds while the next claim is in flight, so that a handler ending meanwhile
   * claims again after it. A single node has no re-check of its queue behind it, so it keeps it;
   * a cluster worker lets the claim in flight decide, and its safety re-check covers the rest.
   */
  fullWhileClaiming: boolean;
  /** Told at each kick, before anything else. */
  kicked?(): void;
  /** Told after each claim and each handler's end (a worker changes what it listens to). */
  settled?(): void;
}

/**
 * The one claim loop: claims as many runnable tasks as there are free slots, runs their handlers,
 * and claims again as handlers end. Wake-ups are coalesced (one claim in flight at a time; a kick
 * meanwhile claims once more after it). A task cancelled or ended while the claim that returns it
 * was in flight has no handler to abort yet, so it is not started at all: the owner passes the
 * bus's events to {@link observe}.
 */
export class ClaimLoop<T extends { id: string }> {
  /** Tasks whose handlers run here, each holding a slot. */
  readonly running = new Set<string>();
  /**
   * Tasks whose handlers are here but wait (a question, a timer, an event) without a slot: they
   * count for nobody's `--workers`, yet a cluster worker still renews their leases.
   */
  readonly idle = new Set<string>();
  /** The latest run of each task here, by number. */
  private readonly runs = new Map<string, number>();
  /** Handlers that want their slot back, first come first served, ahead of any new claim. */
  private readonly slotWaiters: Array<{ id: string; take: () => void }> = [];
  private claimingNow = false;
  private again = false;
  private full = false;
  private stopped = true;
  /** The claim in flight, if any (a drain waits for it: what it returns runs here). */
  private inFlight: Promise<void> | null = null;
  /** Tasks cancelled or ended while a claim was in flight: if it returns them, they must not start. */
  private endedWhileClaiming = new Set<string>();
  /** Claim statements under way (a drain's last claim runs outside a kick). */
  private claimsInFlight = 0;

  constructor(private readonly options: ClaimLoopOptions<T>) {}

  /** A claim is under way (started by a kick). */
  get claiming(): boolean {
    return this.claimingNow;
  }

  /** Claims from now on. */
  open(): void {
    this.stopped = false;
  }

  /** Claims nothing more; handlers running go on. */
  stop(): void {
    this.stopped = true;
    this.again = false;
  }

  /** Claims nothing more, once the claim in flight has returned (what it returns runs here). */
  async stopAfterClaimInFlight(): Promise<void> {
    this.stop();
    while (this.inFlight) await this.inFlight;
  }

  /**
   * A drain's end of claiming on a single node: the claim in flight returns, then one last claim
   * within the free slots starts what was acknowledged before the drain; then nothing more.
   */
  async stopAfterLastClaim(): Promise<void> {
    if (this.stopped) return;
    while (this.inFlight) await this.inFlight;
    this.stopped = true;
    const free = this.freeSlots();
    if (free > 0) await this.claim(free);
  }

  /** An event of the bus: a cancel or an end of a task a claim in flight may return. */
  observe(event: TaskEvent): void {
    if (this.claimsInFlight > 0 && (event.type === "cancel" || (event.type === "status" && isTerminal(event.status))))
      this.endedWhileClaiming.add(event.taskId);
  }

  /** Runs a task that is this process's without a claim of the loop (a recovered one, a lease a lost answer gave). */
  adopt(task: T): void {
    this.runOne(task);
  }

  /**
   * The handler of `id` waits for something outside itself: its slot goes to other work (a claim
   * now, if work was held back for want of one) until {@link reacquire}.
   */
  release(id: string): void {
    if (!this.running.delete(id)) return;
    this.idle.add(id);
    this.slotFreed();
  }

  /**
   * The handler of `id` has what it waited for and goes on once a slot is free: at once when one
   * is, else before any new claim takes the next one that frees. Resolves when it holds it.
   */
  reacquire(id: string): Promise<void> {
    if (!this.idle.has(id)) return Promise.resolve();
    if (this.running.size < this.options.slots && this.slotWaiters.length === 0) {
      this.idle.delete(id);
      this.running.add(id);
      return Promise.resolve();
    }
    return new Promise<void>((resolve) =>
      this.slotWaiters.push({
        id,
        take: () => {
          this.idle.delete(id);
          this.running.add(id);
          resolve();
        },
      }),
    );
  }

  /** Work may be waiting: claims as many tasks as there are free slots; coalesces concurrent wake-ups. */
  kick(): void {
    this.options.kicked?.();
    if (this.stopped) return;
    if (this.claimingNow) {
      this.again = true;
      return;
    }
    const free = this.freeSlots();
    if (free <= 0) {
      this.full = true;
      return;
    }
    if (!this.options.fullWhileClaiming) this.full = false;
    this.claimingNow = true;
    this.inFlight = this.claim(free).finally(() => {
      this.claimingNow = false;
      this.inFlight = null;
      if (this.again) {
        this.again = false;
        this.kick();
      }
      this.options.settled?.();
    });
  }

  private freeSlots(): number {
    // Slots promised to handlers that got what they waited for are not free for new work.
    return Math.min(this.options.slots - this.running.size - this.slotWaiters.length, this.options.maxBatch);
  }

  private async claim(free: number): Promise<void> {
    let answer: ClaimAnswer<T>;
    this.claimsInFlight++;
    try {
      answer = await this.options.claim(free);
    } catch (err) {
      this.claimsInFlight--;
      if (this.claimsInFlight === 0) this.endedWhileClaiming.clear();
      this.full = true;
      this.options.claimFailed(err);
      return;
    }
    this.claimsInFlight--;
    const ended = this.endedWhileClaiming;
    if (this.claimsInFlight === 0) this.endedWhileClaiming = new Set();
    for (const task of answer.tasks) {
      if (ended.has(task.id)) this.options.logger.info({ taskId: task.id }, "handler not started: task ended while it was being claimed");
      else this.runOne(task);
    }
    if (answer.more) this.again = true;
    this.full = answer.full;
  }

  private runOne(task: T): void {
    // A parked run's task can be queued again and claimed before that run has quite ended: the
    // newer run owns the id's slot from then on, and the older one's end frees nothing.
    const run = (this.runs.get(task.id) ?? 0) + 1;
    this.runs.set(task.id, run);
    this.running.add(task.id);
    void this.options.run(task).finally(() => {
      if (this.runs.get(task.id) !== run) return;
      this.runs.delete(task.id);
      // A run that ends while it waits without a slot (cancelled) frees none.
      const heldSlot = this.running.delete(task.id);
      this.idle.delete(task.id);
      this.slotWaiters.splice(0, this.slotWaiters.length, ...this.slotWaiters.filter((w) => w.id !== task.id));
      if (heldSlot) this.slotFreed();
      this.options.settled?.();
    });
  }

  /** A slot came free: a handler that waits for one takes it first; else a claim, if work was held back. */
  private slotFreed(): void {
    const next = this.slotWaiters.shift();
    if (next) next.take();
    else if (this.full) this.kick();
  }
}
