import { statusEvent } from "../../events/task-event.js";
import type { EventBus } from "../../events/event-bus.js";
import type { ClusterStore } from "../../store/lease-store.js";
import type { EngineObserver } from "../engine-observer.js";
import type { Logger } from "../../core/logger.js";
import { taskAuditFields } from "../task-audit.js";
import { failInternally } from "../internal-failure.js";
import { IntervalLoop } from "../upkeep/interval-loop.js";
import { isCheckpointStore } from "../../store/checkpoint-store.js";
import { recoveryOf } from "../recovery-policy.js";
import { storageCondition } from "../../core/storage-condition.js";

/** Options of the lease reaper, which re-queues or fails the tasks of workers that stopped renewing their leases. */
export interface LeaseReaperOptions {
  /** How often expired leases are looked for. Default 1 s. */
  intervalMs?: number;
  /** Runs of a retryable task before it is failed instead of re-queued. Default 3. */
  maxAttempts?: number;
  batch?: number;
  /**
   * The cluster's lease duration (the workers' `leaseMs`). After this node could not reach the
   * store, no lease is reaped for that long once it can again: the workers lost the store too, and
   * each gets a lease's time to renew, or to store the outcome it computed meanwhile. Default 30 s.
   */
  leaseMs?: number;
}

/**
 * Finds tasks whose worker stopped renewing its lease (killed, partitioned, frozen) and either
 * re-queues them — recovery "resume" (checkpoints and pending questions kept) or "retry",
 * at-least-once, bounded attempts — or fails them with a
 * statusMessage saying what happened. Runs on every node; the store's compare-and-set on the
 * expired lease makes concurrent reapers harmless.
 */
export class LeaseReaper {
  private readonly loop: IntervalLoop;
  private readonly maxAttempts: number;
  private readonly batch: number;
  private readonly graceMs: number;
  /** The last round could not reach the store. */
  private blind = false;
  /** No lease is reaped before this time (the store was unreachable until a moment ago). */
  private holdUntil = 0;

  constructor(
    private readonly deps: { store: ClusterStore; bus: EventBus; logger: Logger; now: () => number; observer: EngineObserver },
    options: LeaseReaperOptions = {},
  ) {
    this.maxAttempts = options.maxAttempts ?? 3;
    this.batch = options.batch ?? 100;
    this.graceMs = options.leaseMs ?? 30_000;
    this.loop = new IntervalLoop({
      run: () => this.reap(),
      intervalMs: options.intervalMs ?? 1000,
      logger: deps.logger,
      failure: "lease reaping failed; will retry",
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): void {
    this.loop.stop();
  }

  runOnce(): Promise<void> {
    return this.loop.runOnce();
  }

  private async reap(): Promise<void> {
    const { store, bus, logger, now } = this.deps;
    let expired: Awaited<ReturnType<ClusterStore["expiredLeases"]>>;
    try {
      expired = await store.expiredLeases(now(), this.batch);
    } catch (error) {
      if (storageCondition(error)) this.blind = true;
      throw error;
    }
    if (this.blind) {
      this.blind = false;
      this.holdUntil = now() + this.graceMs;
      logger.info(
        { graceMs: this.graceMs },
        "task store reachable again: leases are reaped after a lease's time, so workers can renew them or store their outcomes",
      );
    }
    if (now() < this.holdUntil) return;
    /** The last heartbeat of each worker alive now (read once a round, only when a task is to be failed). */
    let beats: Promise<Map<string, number>> | null = null;
    /** The worker beat after its lease ran out: it is alive, and lost the store rather than its life. */
    const beatSince = (workerId: string, expiresAt: number): Promise<boolean> => {
      beats ??= store.clusterView(now(), { leaseLimit: 0 }).then(
        (view) => new Map(view.workers.map((w) => [w.workerId, w.heartbeatAt])),
        () => new Map<string, number>(),
      );
      return beats.then((known) => (known.get(workerId) ?? -Infinity) > expiresAt);
    };
    for (const { task, workerId, attempts, expiresAt } of expired) {
      const policy = recoveryOf(task);
      if (policy !== "fail" && attempts < this.maxAttempts) {
        // resume: the next run replays checkpoints and asks the same questions, still pending;
        // retry: it starts from scratch.
        if (await store.requeue(task.id, workerId, this.maxAttempts, now(), { keepInputs: policy === "resume" })) {
          if (policy === "retry" && isCheckpointStore(store)) await store.dropCheckpoints(task.id);
          logger.warn(
            { audit: "requeued", ...taskAuditFields(task), workerId, attempts, recovery: policy },
            "re-queued a task whose worker was lost",
          );
          this.deps.observer.leaseLost(task, "requeued");
          const again = await store.get(task.id, { any: true });
          if (again) bus.publish(statusEvent(again));
          else bus.publish({ type: "wake", taskId: task.id });
        }
        continue;
      }
      // A worker that beat after its lease ran out lost the store, not its life: whatever it computed meanwhile
      // could not be stored before its lease ran out (its late writes are fenced off).
      const what = (await beatSince(workerId, expiresAt))
        ? "The task's worker could not reach the task store for longer than its lease: the outcome could not be stored before the lease ran out"
        : "The task's worker stopped responding (lease expired)";
      const message = task.retryable
        ? `${what} and it already ran ${attempts} times; not re-run again`
        : `${what}; it was not re-run because it was created when its tool declared no recovery ("resume" or "retry")`;
      const failed = await failInternally(this.deps, task, "lease_lost", message, {
        audit: { workerId },
        // Only while the lease is still the expired one: a worker that renewed in time keeps its task.
        write: (statusMessage, outcome, at) => store.failExpired(task.id, workerId, at, statusMessage, outcome),
      });
      if (failed) this.deps.observer.leaseLost(task, "failed");
    }
  }
}
