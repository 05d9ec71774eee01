import type { Logger } from "../core/logger.js";
import type { TaskStore } from "../store/task-store.js";
import { FetchedMarks } from "./fetched-marks.js";

/** Default of {@link FetchedMarkWriter}'s `holdMs`. */
export const FETCHED_MARK_HOLD_MS = 100;

/**
 * Writes the marks that finished tasks' results were fetched (`TaskStore.markFetched`), held for
 * `holdMs` and then written together. Nobody waits for a mark (the answer has gone out), so the
 * hold costs nothing a requestor sees, and under load the marks of a tenth of a second share one
 * statement and one commit on PostgreSQL, where each would otherwise take a share of the commits
 * (0.1–0.15 per task in the cluster bench). On SQLite they share one transaction.
 *
 * What a crash can cost: the marks of the last `holdMs`, so those results count as expired unread
 * when their retention ends. {@link flush} writes them at once (the engine's close calls it).
 */
export class FetchedMarkWriter {
  /** Held: task id → when its result was fetched. */
  private held = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private readonly written = new FetchedMarks();
  private readonly writing = new Set<Promise<void>>();

  constructor(
    private readonly store: Pick<TaskStore, "markFetched">,
    private readonly logger: Logger,
    private readonly holdMs = FETCHED_MARK_HOLD_MS,
  ) {}

  /** Holds the mark that `taskId`'s result was fetched at `now`, unless it is written or held already. */
  fetched(taskId: string, now: number): void {
    if (this.written.has(taskId) || this.held.has(taskId)) return;
    this.held.set(taskId, now);
    if (this.timer !== null) return;
    this.timer = setTimeout(() => void this.flush(), this.holdMs);
    // A held mark does not keep the process alive; a clean close flushes it.
    this.timer.unref();
  }

  /** Writes every held mark now; settles once those writes, and any still under way, have. */
  async flush(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const held = this.held;
    this.held = new Map();
    for (const [taskId, at] of held) {
      // Remembered only once written: a failed mark (a full disk) is tried again at the next fetch.
      const write = this.store.markFetched(taskId, at).then(
        () => this.written.add(taskId),
        (error: unknown) => this.logger.warn({ taskId, err: error }, "could not record that a task's result was fetched"),
      );
      const tracked: Promise<void> = write.finally(() => this.writing.delete(tracked));
      this.writing.add(tracked);
    }
    await Promise.all(this.writing);
  }
}
