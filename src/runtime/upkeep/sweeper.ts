import { ACTIVE_STATUSES } from "../../core/task-status.js";
import type { EventBus } from "../../events/event-bus.js";
import type { TaskStore } from "../../store/task-store.js";
import type { Logger } from "../../core/logger.js";
import type { TaskExecution } from "../task-execution.js";
import { taskAuditFields } from "../task-audit.js";
import { statusEvent } from "../../events/task-event.js";

interface SweeperDeps {
  store: TaskStore;
  bus: EventBus;
  execution: TaskExecution;
  logger: Logger;
  now: () => number;
  intervalMs: number;
  batch: number;
}

/**
 * TTL enforcement (T-TTL-5, T-TTL-7). The ttl is a hard lifetime counted from createdAt:
 * - a task still running when it expires is aborted (signal reason "expired") and marked
 *   `failed` with a statusMessage saying so — never deleted while its handler runs unseen;
 * - terminal tasks past their expiry are deleted with their input queues, in batches.
 * Between expiry and deletion, lookups answer "Task has expired" (T-ERR-7).
 */
export class Sweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(private readonly deps: SweeperDeps) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.runOnce(), this.deps.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One pass; concurrent calls share the pass in progress. */
  runOnce(): Promise<void> {
    this.running ??= this.pass().finally(() => (this.running = null));
    return this.running;
  }

  private async pass(): Promise<void> {
    const { store, bus, execution, logger, now, batch } = this.deps;
    try {
      for (;;) {
        const expired = await store.expiredActive(now(), batch);
        for (const task of expired) {
          const message = `Task expired: its ttl of ${task.ttlMs} ms elapsed before it finished`;
          const failed = await store.transition(task.id, ACTIVE_STATUSES, "failed", {
            statusMessage: message,
            outcome: { kind: "error", error: { code: -32603, message } },
            now: now(),
          });
          if (!failed) continue;
          logger.info({ audit: "expired", ...taskAuditFields(task) }, "running task expired");
          bus.publish(statusEvent(failed));
          bus.publish({ type: "cancel", taskId: task.id, reason: "expired" });
          execution.abort(task.id, "expired");
        }
        if (expired.length < batch) break;
      }
      let deleted = 0;
      for (;;) {
        const n = await store.deleteExpired(now(), batch);
        deleted += n;
        if (n < batch) break;
      }
      if (deleted > 0) logger.info({ audit: "swept", count: deleted }, "expired tasks deleted");
    } catch (error) {
      logger.error({ err: error }, "sweep failed; will retry on the next interval");
    }
  }
}
