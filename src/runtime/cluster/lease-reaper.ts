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

export interface LeaseReaperOptions {
  /** How often expired leases are looked for. Default 1 s. */
  intervalMs?: number;
  /** Runs of a retryable task before it is failed instead of re-queued. Default 3. */
  maxAttempts?: number;
  batch?: number;
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

  constructor(
    private readonly deps: { store: ClusterStore; bus: EventBus; logger: Logger; now: () => number; observer: EngineObserver },
    options: LeaseReaperOptions = {},
  ) {
    this.maxAttempts = options.maxAttempts ?? 3;
    this.batch = options.batch ?? 100;
    this.loop = new IntervalLoop({ run: () => this.reap(), intervalMs: options.intervalMs ?? 1000, logger: deps.logger, failure: "lease reaping failed; will retry" });
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
    const expired = await store.expiredLeases(now(), this.batch);
    for (const { task, workerId, attempts } of expired) {
      const policy = recoveryOf(task);
      if (policy !== "fail" && attempts < this.maxAttempts) {
        // resume: the next run replays checkpoints and asks the same questions, still pending;
        // retry: it starts from scratch.
        if (await store.requeue(task.id, workerId, this.maxAttempts, now(), { keepInputs: policy === "resume" })) {
          if (policy === "retry" && isCheckpointStore(store)) await store.dropCheckpoints(task.id);
          logger.warn({ audit: "requeued", ...taskAuditFields(task), workerId, attempts, recovery: policy }, "re-queued a task whose worker was lost");
          this.deps.observer.leaseLost(task, "requeued");
          const again = await store.get(task.id, { any: true });
          if (again) bus.publish(statusEvent(again));
          else bus.publish({ type: "wake", taskId: task.id });
        }
        continue;
      }
      const message = task.retryable
        ? `The task's worker stopped responding (lease expired) and it already ran ${attempts} times; not re-run again`
        : 'The task\'s worker stopped responding (lease expired); it was not re-run because it was created when its tool declared no recovery ("resume" or "retry")';
      const failed = await failInternally(this.deps, task, "lease_lost", message, {
        audit: { workerId },
        // Only while the lease is still the expired one: a worker that renewed in time keeps its task.
        write: (statusMessage, outcome, at) => store.failExpired(task.id, workerId, at, statusMessage, outcome),
      });
      if (failed) this.deps.observer.leaseLost(task, "failed");
    }
  }
}
