import type { TaskProgress } from "../core/task.js";

/**
 * Stores a run's progress reports in the order they were made: one write in flight at a time,
 * and behind it only the newest report (the ones it replaces were each heard on the bus already;
 * the store keeps one progress per task). So the last report stored is the last one made, and
 * the run can wait for it before its outcome is written: a report's write must not land after
 * the outcome, where a cluster's fencing drops it (the claim ended) and the task keeps an older
 * progress.
 */
export class ProgressWriter {
  private inFlight: Promise<void> | null = null;
  private waiting: TaskProgress | null = null;

  /** @param write stores one report; it handles its own failures (never rejects). */
  constructor(private readonly write: (report: TaskProgress) => Promise<void>) {}

  report(report: TaskProgress): void {
    if (this.inFlight) {
      this.waiting = report;
      return;
    }
    this.inFlight = this.writeFrom(report);
  }

  /** Resolves once every report made so far is stored (or its write failed). */
  settled(): Promise<void> {
    return this.inFlight ?? Promise.resolve();
  }

  private async writeFrom(first: TaskProgress): Promise<void> {
    let next: TaskProgress | null = first;
    while (next) {
      // Defensive: a write that rejects must not stop later reports nor the outcome's wait.
      await this.write(next).catch(() => {});
      next = this.waiting;
      this.waiting = null;
    }
    this.inFlight = null;
  }
}
