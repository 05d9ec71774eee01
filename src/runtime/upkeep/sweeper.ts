import type { EventBus } from "../../events/event-bus.js";
import type { RetentionRules, TaskStore } from "../../store/task-store.js";
import type { Logger } from "../../core/logger.js";
import type { TaskExecution } from "../task-execution.js";
import { failInternally } from "../internal-failure.js";
import { IntervalLoop } from "./interval-loop.js";

interface SweeperDeps {
  store: TaskStore;
  bus: EventBus;
  execution: TaskExecution;
  logger: Logger;
  now: () => number;
  intervalMs: number;
  batch: number;
  retention: RetentionRules;
}

/**
 * TTL enforcement (T-TTL-5, T-TTL-7). The ttl is a hard lifetime counted from createdAt:
 * - a task still running when it expires is aborted (signal reason "expired") and marked
 *   `failed` with a statusMessage saying so — never deleted while its handler runs unseen;
 * - terminal tasks past their retention (their expiry, and `keepFinishedMs` after they ended) are
 *   deleted with their input queues, in batches, and their ids remembered for `rememberExpiredMs`.
 * Between expiry and deletion, and while the id is remembered, lookups answer "Task has expired" (T-ERR-7).
 */
export class Sweeper {
  private readonly loop: IntervalLoop;

  constructor(private readonly deps: SweeperDeps) {
    this.loop = new IntervalLoop({
      run: () => this.pass(),
      intervalMs: deps.intervalMs,
      logger: deps.logger,
      failure: "sweep failed; will retry on the next interval",
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): void {
    this.loop.stop();
  }

  /** One pass; concurrent calls share the pass in progress. */
  runOnce(): Promise<void> {
    return this.loop.runOnce();
  }

  private async pass(): Promise<void> {
    const { store, execution, logger, now, batch } = this.deps;
    for (;;) {
      const expired = await store.expiredActive(now(), batch);
      for (const task of expired) {
        const message = `Task expired: its ttl of ${task.ttlMs} ms elapsed before it finished`;
        if (await failInternally(this.deps, task, "expired", message)) execution.abort(task.id, "expired");
      }
      if (expired.length < batch) break;
    }
    let deleted = 0;
    let unread = 0;
    for (;;) {
      const swept = await store.deleteExpired(now(), batch, this.deps.retention);
      deleted += swept.deleted;
      unread += swept.unread;
      if (swept.deleted < batch) break;
    }
    if (deleted > 0) logger.info({ audit: "swept", count: deleted, unread }, "expired tasks deleted");
  }
}
