import type { ClaimedTask } from "../../store/claim.js";
import type { EventBus } from "../../events/event-bus.js";
import type { ClusterStore } from "../../store/lease-store.js";
import type { Logger } from "../../core/logger.js";
import type { TaskExecution } from "../task-execution.js";
import { IntervalLoop } from "../upkeep/interval-loop.js";
import type { ClaimCaps } from "../../store/run-queue.js";
import { ClaimLoop, type ClaimAnswer } from "../claim-loop.js";

/** Options of the cluster worker pool (`--workers`, `--lease-ms`); defaults are listed in docs/deployment.md. */
export interface WorkerPoolOptions {
  /** Unique per process: leases are held in its name. */
  workerId: string;
  /** Handlers run at once by this process; 0 makes a pure front node. */
  concurrency: number;
  /** How long a lease lasts without renewal. Default 30 s; renewed every third of it. */
  leaseMs?: number;
  /** Safety re-check of the queue when no event arrived. Default 5 s (events are the mechanism). */
  recheckMs?: number;
  /** Only claim tasks of these names (the tools this process has); a function is read at each claim. */
  names?: readonly string[] | (() => readonly string[]);
  /**
   * How long a worker that is not first in the wake order waits, per place behind the first,
   * before it claims a new task nobody was seen to take. Default 100 ms.
   */
  standbyMs?: number;
  /**
   * The process does nothing but run handlers (`mcp-tasks worker`): standing by with nothing to
   * run, it may stop hearing other nodes' events altogether. Never for a node that also serves
   * requests, whose waiters and streams need every event. Default false.
   */
  workerOnly?: boolean;
}

/** A standby backs off to at most this many times `standbyMs` per place: 800 ms for the second worker by default. */
const MAX_BACKOFF = 8;

interface PoolDeps {
  store: ClusterStore;
  bus: EventBus;
  execution: TaskExecution;
  logger: Logger;
  now: () => number;
  /** The caps of each claim (per owner, per tool), read at each claim. */
  caps?: () => ClaimCaps;
}

/**
 * Runs queued tasks of a cluster store: claims them with a lease when the bus says work arrived
 * (or on the slow safety re-check), runs their handlers, renews the leases meanwhile, and aborts a
 * handler whose lease it lost (its task is someone else's now).
 *
 * A new task wakes one worker. Every worker hears every creation, but only the first in the wake
 * order — the live workers, oldest start first, as each heartbeat answers them — claims at once.
 * The one at place k stands by: it claims only if, k × `standbyMs` later, a task it heard of has
 * shown no sign of having been taken (a later event of it: progress, a question, its end) and no
 * claim of its own has covered it. So while the first worker has free slots it takes all the
 * work, claims stay as few and as full as with one worker, and the second claim that finds
 * nothing is gone; a first worker that is full, dead (until its heartbeat runs out) or draining
 * hands the work on to the next one after a standby, never a lease. A standby claim that finds
 * nothing doubles the next standby (up to 8×): on a loaded machine the first worker's tasks can
 * take longer than a standby to end although it keeps up. Workers that disagree about
 * the order for a moment (one just started or stopped) at worst both claim, or both wait one
 * standby.
 *
 * Filling one worker before the next keeps batches of claims and outcome writes whole;
 * spreading tasks evenly would halve every batch and double the claims, outcome writes and
 * commits per task.
 *
 * A standby process that only runs handlers (`workerOnly`) and runs nothing does not even
 * listen: on a bus that can stop hearing other nodes
 * (PostgreSQL's: UNLISTEN), it asks the store instead, one standby after another (backed off to
 * 8 standbys while it finds nothing), whether a task has waited unclaimed for a standby or
 * longer, and if so listens again and claims. Every NOTIFY of the cluster would otherwise cost
 * the database a delivery to it and it a parse, for events it only ever notes. It keeps
 * listening while it runs handlers (their cancels and answers come as events) and while it is
 * first in the order.
 */
export class WorkerPool {
  private readonly leaseMs: number;
  /**
   * Claims with a lease and runs each handler fenced by its claim. Its "full" is decided by each
   * claim: when a wake-up found every slot taken (or a claim filled them or hit a cap), the next
   * handler to finish claims; otherwise a finishing handler claims nothing: the queue was empty at
   * the last claim, and whatever arrived since announced itself with an event (each claim
   * returning nothing was a statement, and under load a handler finishes for every task).
   */
  private readonly loop: ClaimLoop<ClaimedTask>;
  private stopped = true;
  /** Draining: no more claims, while the leases of what still runs are renewed. */
  private claimsStopped = false;
  /**
   * A claim failed without an answer: its statement may have committed, leasing tasks to this
   * worker that it never heard of. The next claim first asks the store which leases are ours.
   */
  private unsure = false;
  /** The prompt retry after a failed claim (the safety re-check is too slow for a lease). */
  private retryTimer: NodeJS.Timeout | null = null;
  /** The slow safety re-check of the queue. */
  private readonly recheck: IntervalLoop;
  /** Lease renewal, every third of the lease: a slow renewal is joined, not overlapped. */
  private readonly renewal: IntervalLoop;
  private unsubscribe: (() => void) | null = null;
  /** This worker's place in the wake order (0: claims at once); -1 until its first heartbeat answers, and it claims at once meanwhile. */
  private place = -1;
  private readonly standbyMs: number;
  /** New tasks heard while standing by, with when (performance.now()), oldest first, not yet seen taken. */
  private readonly standingBy = new Map<string, number>();
  private standbyTimer: NodeJS.Timeout | null = null;
  /**
   * The standby's multiplier: doubled (up to {@link MAX_BACKOFF}) by each standby claim that found
   * nothing — the first worker keeps up, its tasks merely take longer than a standby to end (a
   * loaded machine) — and back to 1 by one that found work.
   */
  private backoff = 1;
  /** The next claim is a standby's. */
  private standbyClaim = false;
  /** When {@link start} began claiming (the heartbeat's startedAt). */
  private startedAt = 0;
  /**
   * A standby with nothing to run: not hearing other nodes' events (the bus's `hearOthers`), it
   * looks at the queue itself ({@link poll}).
   */
  private dormant = false;
  private pollTimer: NodeJS.Timeout | null = null;
  /**
   * A dormant standby's look found work: it listens again first, and claims on the `wake` that
   * follows, so that a cancel of what it claims is heard from the start.
   */
  private wakingToClaim = false;
  /**
   * The dormant standby's looks come one standby apart, doubled (up to {@link MAX_BACKOFF}) by
   * each look that found nothing: a look is a statement and a wake-up of a process otherwise
   * asleep (about a millisecond of CPU in code too rarely run to be optimised), and a quiet
   * standby needs few. A look that finds work brings it back to one standby.
   */
  private lookBackoff = 1;
  /** A look's statement is under way (the next is scheduled when it returns). */
  private looking = false;
  /** The heartbeat in flight, if any (a stop waits for it, so its row is not re-created after the retire). */
  private beating: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: PoolDeps,
    private readonly options: WorkerPoolOptions,
  ) {
    this.leaseMs = options.leaseMs ?? 30_000;
    this.standbyMs = options.standbyMs ?? 100;
    this.recheck = new IntervalLoop({
      // A dormant standby looks at the queue itself, once per standby.
      run: () => Promise.resolve(this.dormant ? undefined : this.kick()),
      intervalMs: options.recheckMs ?? 5_000,
      logger: deps.logger,
      failure: "re-checking the queue failed",
    });
    this.renewal = new IntervalLoop({
      run: () => this.renew(),
      intervalMs: Math.max(50, Math.floor(this.leaseMs / 3)),
      logger: deps.logger,
      failure: "renewing leases failed; will retry before they run out",
    });
    this.loop = new ClaimLoop<ClaimedTask>({
      slots: options.concurrency,
      maxBatch: Number.POSITIVE_INFINITY,
      logger: deps.logger,
      fullWhileClaiming: false,
      claim: (free) => this.claim(free),
      claimFailed: (err) => this.claimFailed(err),
      run: (task) => this.runOne(task),
      kicked: () => (this.wakingToClaim = false),
      settled: () => this.settle(),
    });
  }

  /**
   * Tasks whose handlers are here: running in a slot, or waiting without one (their leases are
   * renewed all the same, and their cancels and answers must be heard).
   */
  private get running(): ReadonlySet<string> {
    return this.loop.idle.size === 0 ? this.loop.running : new Set([...this.loop.running, ...this.loop.idle]);
  }

  /** The claim loop's slots, for a handler that waits without one (see TaskExecution). */
  get slots(): Pick<ClaimLoop<{ id: string }>, "release" | "reacquire"> {
    return this.loop;
  }

  get workerId(): string {
    return this.options.workerId;
  }

  start(): void {
    if (!this.stopped || this.options.concurrency <= 0) return;
    this.stopped = false;
    if (!this.claimsStopped) this.loop.open();
    this.startedAt = this.deps.now();
    this.unsubscribe = this.deps.bus.onAny((event) => {
      // New work: a created task or a re-queued one; a nudge after a bus reconnection (events may
      // have been lost, so everyone looks at once).
      if (event.type === "status" && event.status === "working") this.heard(event.taskId);
      else if (event.type === "wake") this.kick();
      // Any other event of a task means it was taken (it runs) or ended: nothing to stand by for.
      else if (this.standingBy.size > 0) this.standingBy.delete(event.taskId);
      // A cancel heard while a claim is in flight may be for a task that claim returns: its
      // handler, not yet started, has no signal to abort, so it must not start at all.
      this.loop.observe(event);
    });
    this.recheck.start();
    this.renewal.start();
    void this.beat();
    this.kick();
  }

  /**
   * Takes no more work (a drain) but keeps renewing the leases of the handlers still running, so
   * they can finish within the grace period. Resolves once a claim in flight has returned: from
   * then on the set of tasks running here only shrinks.
   */
  async stopClaiming(): Promise<void> {
    this.claimsStopped = true;
    await this.loop.stopAfterClaimInFlight();
  }

  /**
   * Stops claiming and renewing, and takes this worker out of the cluster's view (a clean stop:
   * not shown as alive until its heartbeat runs out). Handlers still running are left to the
   * caller (TaskEngine.close).
   */
  async stop(): Promise<void> {
    const wasRunning = !this.stopped;
    this.stopped = true;
    this.loop.stop();
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.recheck.stop();
    this.renewal.stop();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (this.standbyTimer) clearTimeout(this.standbyTimer);
    this.standbyTimer = null;
    this.standingBy.clear();
    if (this.pollTimer) clearTimeout(this.pollTimer);
    this.pollTimer = null;
    this.dormant = false;
    if (!wasRunning) return;
    await this.beating;
    await this.deps.store
      .retire(this.options.workerId)
      .catch((err: unknown) =>
        this.deps.logger.warn({ err }, "could not remove this worker from the cluster view; it drops out when its heartbeat runs out"),
      );
  }

  /**
   * Stops or starts hearing other nodes' events as this worker's part changes: a standby (place
   * 1 or later) that runs nothing and claims nothing needs none of them, and looks at the queue
   * itself instead; a worker that runs handlers (their cancels and answers are events) or is
   * first in the order hears them all.
   */
  private settle(): void {
    const { bus, store } = this.deps;
    if (bus.hearOthers === undefined || this.options.workerOnly !== true) return;
    const idle =
      this.place >= 1 && this.running.size === 0 && !this.loop.claiming && !this.wakingToClaim && !this.stopped && !this.claimsStopped;
    if (idle && !this.dormant) {
      this.dormant = true;
      // Its looks read the queue's age itself: the listening standby's back-off has no part in them.
      this.lookBackoff = 1;
      this.backoff = 1;
      if (this.standbyTimer) clearTimeout(this.standbyTimer);
      this.standbyTimer = null;
      this.standingBy.clear();
      void bus.hearOthers(false);
    } else if (!idle && this.dormant) {
      this.dormant = false;
      if (this.pollTimer) clearTimeout(this.pollTimer);
      this.pollTimer = null;
      // Hearing again wakes every observer here, this pool included (a claim at once). If the
      // bus never stopped listening there is no such wake: a look that found work claims then.
      void bus.hearOthers(true).then(() => {
        if (this.wakingToClaim) this.kick();
      });
    }
    if (this.dormant && this.pollTimer === null && !this.looking) {
      this.pollTimer = setTimeout(() => void this.poll(store), this.place * this.standbyMs * this.lookBackoff);
      this.pollTimer.unref();
    }
  }

  /**
   * A dormant standby's look at the queue, one standby after the last: claims if a task has waited
   * unclaimed for a standby or longer (the first worker is full, gone or draining), as a listening
   * standby does for a task it heard of and never saw taken.
   */
  private async poll(store: ClusterStore): Promise<void> {
    this.pollTimer = null;
    if (!this.dormant) return;
    const names = typeof this.options.names === "function" ? this.options.names() : this.options.names;
    let waiting = false;
    this.looking = true;
    try {
      waiting = await store.queuedSince(this.deps.now() - this.standbyDelay(), names);
    } catch (err) {
      this.deps.logger.warn({ err }, "looking at the queue failed; will look again after the next standby");
    } finally {
      this.looking = false;
    }
    if (!this.dormant) return;
    if (waiting) {
      this.standbyClaim = true;
      this.wakingToClaim = true;
      this.lookBackoff = 1;
    } else {
      this.lookBackoff = Math.min(MAX_BACKOFF, this.lookBackoff * 2);
    }
    this.settle();
  }

  /** A task was queued: the first worker in the wake order claims; the others stand by. */
  private heard(taskId: string): void {
    if (this.place <= 0) {
      this.kick();
      return;
    }
    if (this.stopped || this.claimsStopped) return;
    this.standingBy.set(taskId, performance.now());
    this.standbyTimer ??= setTimeout(() => this.standBy(), this.standbyDelay());
  }

  /** The standby ran out: claims if a task heard long enough ago is still not seen taken, else waits for the next one's turn. */
  private standBy(): void {
    this.standbyTimer = null;
    const oldest = this.standingBy.values().next();
    if (oldest.done === true) return;
    const wait = oldest.value + this.standbyDelay() - performance.now();
    if (wait > 0) {
      this.standbyTimer = setTimeout(() => this.standBy(), wait);
      return;
    }
    this.standingBy.clear();
    this.standbyClaim = true;
    this.kick();
  }

  private standbyDelay(): number {
    return this.place * this.standbyMs * this.backoff;
  }

  /** Claims as many tasks as there are free slots; coalesces concurrent wake-ups. */
  kick(): void {
    this.loop.kick();
  }

  /** The leased claim of the loop: first what a lost answer may have leased here, then up to the slots still free. */
  private async claim(free: number): Promise<ClaimAnswer<ClaimedTask>> {
    const { store, logger, now } = this.deps;
    if (this.unsure) {
      // Tasks a lost answer leased to us: run them all (their handlers never started; the lost claim asked for no more than its free slots then), and claim only for what is left free.
      const ours = (await store.heldLeases(this.options.workerId, now())).filter((task) => !this.running.has(task.id));
      this.unsure = false;
      for (const task of ours) {
        logger.warn(
          { taskId: task.id, workerId: this.options.workerId, attempt: task.claim.attempt },
          "running a task a claim leased to this worker although its answer was lost",
        );
        this.loop.adopt(task);
      }
      free -= ours.length;
      if (free <= 0) return { tasks: [], more: false, full: true };
    }
    const names = typeof this.options.names === "function" ? this.options.names() : this.options.names;
    const caps = this.deps.caps?.();
    const askedAt = performance.now();
    const claimed = await store.claim(this.options.workerId, free, this.leaseMs, now(), names, caps);
    logger.debug({ workerId: this.options.workerId, free, claimed: claimed.length, standby: this.standbyClaim }, "claim");
    if (this.standbyClaim) this.backoff = claimed.length === 0 ? Math.min(MAX_BACKOFF, this.backoff * 2) : 1;
    this.standbyClaim = false;
    const capped = caps !== undefined && (caps.perOwner !== null || Object.keys(caps.perName).length > 0);
    // A claim with slots to spare took everything then queued that this worker can run: what
    // was heard before it is covered (a task of a tool it lacks is not its to wait for).
    if (!capped && claimed.length < free) this.coveredUntil(askedAt);
    // Under caps a short claim may have left tasks waiting for a cap: a handler's end may free it.
    // A full batch may mean more is waiting (the next kick finds no free slot and marks the pool full).
    return { tasks: claimed, more: claimed.length === free, full: capped };
  }

  private claimFailed(err: unknown): void {
    this.deps.logger.warn({ err }, "claiming tasks failed; will retry");
    this.unsure = true;
    // The next handler to finish tries again, or this retry, well within a lease: a claim that
    // committed unheard holds its tasks until their leases run out.
    this.retryTimer ??= setTimeout(
      () => {
        this.retryTimer = null;
        this.kick();
      },
      Math.min(500, Math.floor(this.leaseMs / 6)),
    ).unref();
  }

  private coveredUntil(time: number): void {
    for (const [taskId, heardAt] of this.standingBy) {
      if (heardAt > time) break;
      this.standingBy.delete(taskId);
    }
  }

  /** Runs a claimed task's handler, fenced by its claim: its writes hold only while the lease is this worker's. */
  private runOne(claimed: ClaimedTask): Promise<void> {
    const { execution, logger } = this.deps;
    const { claim, ...task } = claimed;
    logger.debug({ taskId: task.id, workerId: this.options.workerId, attempt: claim.attempt }, "claimed task");
    // The task stays in `running` (its lease renewed) until run() returns, which includes the
    // retries of an outcome write the store refused for a while (a database restarting): the
    // lease stays this worker's for as long as the outcome is on its way.
    // No release afterwards: the terminal transition that stored the outcome (or the cancel or
    // expiry that ended the run) dropped the lease in the same statement. The other ways a run
    // ends leave it alone on purpose: a lost lease is another worker's, a shutdown is handled by
    // TaskEngine.close, and an outcome the store refused keeps the lease until it runs out, so the
    // reaper applies the retry rules (released, the task would be re-claimed and re-run at once,
    // retryable or not).
    return execution
      .run(task, { claimed: true, claim })
      .catch((err: unknown) => logger.error({ err, taskId: task.id }, "running a claimed task failed"));
  }

  /**
   * The heartbeat the cluster view reads (ClusterView): who this worker is, written with each
   * renewal round, idle or not, so it lives exactly as long as its leases would.
   */
  private beat(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    const { store, logger, now } = this.deps;
    this.beating = store
      .heartbeat(
        { workerId: this.options.workerId, startedAt: this.startedAt, concurrency: this.options.concurrency, leaseMs: this.leaseMs },
        now(),
      )
      .then((alive) => {
        // Not listed (its row was just forgotten, or a retire raced the beat): first, so that work is never left to nobody.
        const place = Math.max(0, alive.indexOf(this.options.workerId));
        if (place !== this.place)
          logger.info({ workerId: this.options.workerId, place, workers: alive.length }, "this worker's place in the wake order changed");
        this.place = place;
        this.settle();
      })
      .catch((err: unknown) => logger.warn({ err }, "writing this worker's heartbeat failed; will retry with the next renewal"));
    return this.beating;
  }

  /** A renewal round: the heartbeat and the leases, side by side (a slow one never delays the other). */
  private async renew(): Promise<void> {
    await Promise.all([this.beat(), this.renewLeases()]);
  }

  private async renewLeases(): Promise<void> {
    if (this.running.size === 0) return;
    const { store, execution, logger, now } = this.deps;
    const ids = [...this.running];
    let held: string[];
    try {
      held = await store.renew(this.options.workerId, ids, this.leaseMs, now());
    } catch (err) {
      logger.warn({ err }, "renewing leases failed; will retry before they run out");
      return;
    }
    const kept = new Set(held);
    for (const id of ids) {
      if (kept.has(id) || !this.running.has(id)) continue;
      // Someone else owns this task now (we were too slow to renew): stop our copy of the work.
      logger.warn({ taskId: id, workerId: this.options.workerId }, "lease lost; aborting the handler");
      execution.abort(id, "lease_lost");
    }
  }
}
