import type { TaskRecord } from "../core/task.js";
import type { Logger } from "../core/logger.js";
import { isTerminal } from "../core/task-status.js";
import type { EventBus, Unsubscribe } from "../events/event-bus.js";
import type { ClaimCaps, RunQueueStore } from "../store/run-queue.js";
import type { TaskExecution } from "./task-execution.js";

interface DispatchDeps {
  store: RunQueueStore;
  bus: EventBus;
  execution: TaskExecution;
  logger: Logger;
  now: () => number;
}

export interface DispatchOptions {
  /** Handlers run at once by this node (`--workers`); Infinity: as many as there are tasks. */
  slots: number;
  /** The caps of each claim, read at each claim (tools can be added while serving). */
  caps: () => ClaimCaps;
}

/** Most tasks one claim statement takes, however many slots are free. */
const CLAIM_BATCH = 256;

/**
 * A single node's scheduler: a created task waits in the store's queue (no handler, no timer) and
 * starts when this node has a free slot and the store's fair claim picks it, as a cluster's
 * workers claim from PostgreSQL. Claims are coalesced: one in flight at a time.
 */
export class LocalDispatcher {
  private running = 0;
  private claiming = false;
  private again = false;
  private stopped = true;
  /** A claim came back short because of a cap, not an empty queue: a handler's end may free it. */
  private capped = false;
  /** The claim in flight, if any (a drain waits for it: what it returns runs here). */
  private inFlight: Promise<void> | null = null;
  /** Tasks cancelled or ended while a claim was in flight: if it returns them, they must not start. */
  private endedWhileClaiming = new Set<string>();
  /** Claim statements under way (a drain's last claim runs outside {@link claiming}). */
  private claimsInFlight = 0;
  private unsubscribe: Unsubscribe | null = null;

  constructor(
    private readonly deps: DispatchDeps,
    private readonly options: DispatchOptions,
  ) {}

  start(): void {
    this.stopped = false;
    // A task the claim returns was active when the claim read it; a cancel or an expiry after
    // that had no handler to abort, so the claimer watches for them instead of reading each
    // claimed task again before its handler starts.
    this.unsubscribe ??= this.deps.bus.onAny((event) => {
      if (this.claimsInFlight > 0 && (event.type === "cancel" || (event.type === "status" && isTerminal(event.status)))) this.endedWhileClaiming.add(event.taskId);
    });
    this.kick();
  }

  /** Claims nothing more (a close); handlers running go on. */
  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /**
   * A drain's end of claiming: the claim in flight returns, then one last claim within the free
   * slots and the caps starts what was acknowledged before the drain (a task created a moment
   * before the signal, whose claim was still to come, runs in the grace period as it would have a
   * moment earlier); then nothing more. What the slots or caps leave stays queued for the next start.
   */
  async stopAfterLastClaim(): Promise<void> {
    if (this.stopped) return;
    while (this.inFlight) await this.inFlight;
    this.stopped = true;
    const free = Math.min(this.options.slots - this.running, CLAIM_BATCH);
    if (free > 0) await this.claim(free);
  }

  /** Runs a task whose handler had started before a restart (recovery), in one of the slots. */
  adopt(task: TaskRecord): void {
    this.runOne(task);
  }

  /** New work may be queued (a creation): claim if a slot is free. */
  kick(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    const free = Math.min(this.options.slots - this.running, CLAIM_BATCH);
    if (free <= 0) {
      this.capped = true;
      return;
    }
    this.claiming = true;
    this.inFlight = this.claim(free).finally(() => {
      this.claiming = false;
      this.inFlight = null;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  private async claim(free: number): Promise<void> {
    const { store, logger, now } = this.deps;
    const caps = this.options.caps();
    let claimed: TaskRecord[];
    this.claimsInFlight++;
    try {
      claimed = await store.claimRunnable(free, now(), caps);
    } catch (err) {
      this.claimsInFlight--;
      if (this.claimsInFlight === 0) this.endedWhileClaiming.clear();
      logger.warn({ err }, "claiming queued tasks failed; the next task to end or be created tries again");
      this.capped = true;
      return;
    }
    this.claimsInFlight--;
    const ended = this.endedWhileClaiming;
    if (this.claimsInFlight === 0) this.endedWhileClaiming = new Set();
    // Without the watch (stopped meanwhile), each run reads its task again before starting.
    const watched = this.unsubscribe !== null;
    for (const task of claimed) {
      if (ended.has(task.id)) logger.info({ taskId: task.id }, "handler not started: task ended while it was being claimed");
      else this.runOne(task, watched);
    }
    // A full batch: more may wait. A short one under caps: what is left may be waiting for a cap.
    if (claimed.length === free) this.again = true;
    this.capped = claimed.length === free || caps.perOwner !== null || Object.keys(caps.perName).length > 0;
  }

  private runOne(task: TaskRecord, claimed = false): void {
    this.running++;
    void this.deps.execution
      .run(task, { claimed })
      .catch((err: unknown) => this.deps.logger.error({ err, taskId: task.id }, "running a task failed"))
      .finally(() => {
        this.running--;
        if (this.capped) this.kick();
      });
  }
}
