import type { TaskRecord } from "../core/task.js";
import type { Logger } from "../core/logger.js";
import type { EventBus, Unsubscribe } from "../events/event-bus.js";
import type { ClaimCaps, RunQueueStore } from "../store/run-queue.js";
import { ClaimLoop } from "./claim-loop.js";
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

/** A task to run here, and whether the claimer watched for its cancel while claiming it (else its run reads it again first). */
interface LocalRun {
  id: string;
  task: TaskRecord;
  watched: boolean;
}

/**
 * A single node's scheduler: a created task waits in the store's queue (no handler, no timer) and
 * starts when this node has a free slot and the store's fair claim picks it, as a cluster's
 * workers claim from PostgreSQL, through the same claim loop. No lease and no fence: the node's
 * writer lock makes every task in the store its own.
 */
export class LocalDispatcher {
  private readonly loop: ClaimLoop<LocalRun>;
  private unsubscribe: Unsubscribe | null = null;

  constructor(
    private readonly deps: DispatchDeps,
    options: DispatchOptions,
  ) {
    const { store, execution, logger, now } = deps;
    this.loop = new ClaimLoop<LocalRun>({
      slots: options.slots,
      maxBatch: CLAIM_BATCH,
      logger,
      // No safety re-check of the queue behind it: a handler ending while a claim is in flight claims again after it.
      fullWhileClaiming: true,
      claim: async (free) => {
        const caps = options.caps();
        const claimed = await store.claimRunnable(free, now(), caps);
        // Without the watch (stopped meanwhile), each run reads its task again before starting.
        const watched = this.unsubscribe !== null;
        const more = claimed.length === free;
        // A full batch: more may wait. A short one under caps: what is left may be waiting for a cap.
        return {
          tasks: claimed.map((task) => ({ id: task.id, task, watched })),
          more,
          full: more || caps.perOwner !== null || Object.keys(caps.perName).length > 0,
        };
      },
      claimFailed: (err) => logger.warn({ err }, "claiming queued tasks failed; the next task to end or be created tries again"),
      run: ({ task, watched }) =>
        execution.run(task, { claimed: watched }).catch((err: unknown) => logger.error({ err, taskId: task.id }, "running a task failed")),
    });
  }

  start(): void {
    this.loop.open();
    // A task the claim returns was active when the claim read it; a cancel or an expiry after
    // that had no handler to abort, so the claimer watches for them instead of reading each
    // claimed task again before its handler starts.
    // A `wake` may be a parked task queued again (an answer, an event, a timer): claim if a slot is free.
    this.unsubscribe ??= this.deps.bus.onAny((event) => {
      this.loop.observe(event);
      if (event.type === "wake") this.loop.kick();
    });
    this.loop.kick();
  }

  /** Claims nothing more (a close); handlers running go on. */
  stop(): void {
    this.loop.stop();
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /**
   * A drain's end of claiming: the claim in flight returns, then one last claim within the free
   * slots and the caps starts what was acknowledged before the drain (a task created a moment
   * before the signal, whose claim was still to come, runs in the grace period as it would have a
   * moment earlier); then nothing more. What the slots or caps leave stays queued for the next start.
   */
  stopAfterLastClaim(): Promise<void> {
    return this.loop.stopAfterLastClaim();
  }

  /** Runs a task whose handler had started before a restart (recovery), in one of the slots. */
  adopt(task: TaskRecord): void {
    this.loop.adopt({ id: task.id, task, watched: false });
  }

  /** The claim loop's slots, for a handler that waits without one (see TaskExecution). */
  get slots(): Pick<ClaimLoop<{ id: string }>, "release" | "reacquire"> {
    return this.loop;
  }

  /** New work may be queued (a creation): claim if a slot is free. */
  kick(): void {
    this.loop.kick();
  }
}
