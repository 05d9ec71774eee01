import type { SqliteDatabase as Database } from "./driver.js";

interface Job {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for the store's hottest writes (a task's creation, its status changes, the mark
 * that its result was fetched, the SSE events of Streamable HTTP streams). Each is
 * queued and run at the end of the event-loop turn that queued it, together with the others of
 * that turn, in one transaction: under load a commit (its WAL frames for the table, its indexes,
 * the counts and the history) is paid once for several writes instead of once each. Every write
 * is still acknowledged only after its own commit returned, so what a caller was told is stored
 * is in the WAL, as durable as before (WAL + synchronous=NORMAL survives a kill -9).
 *
 * Order is kept: the store runs {@link flush} before any statement outside the queue (a
 * lookup of one task: {@link flushFor} it), so every statement sees the writes called before it,
 * as it would have without grouping; only the commits are grouped. When any write
 * of a group fails, the group is rolled back and each write runs again on its own, so one failure
 * (a full disk, a busy file) reaches exactly the callers it would have reached without grouping.
 */
export class GroupCommit {
  private queue: Job[] = [];
  /** The tasks the queued writes touch. */
  private keys = new Set<string>();
  private scheduled = false;
  private tickScheduled = false;

  constructor(private readonly db: Database) {}

  /**
   * Runs `work` (synchronous statements writing the one task `key`, or rows no task lookup reads
   * under a key no task has) in the next group; resolves once its commit returned.
   *
   * `"turn"` commits at the end of the event-loop turn; `"tick"` as soon as the promise jobs
   * running now are done (with whatever else is queued), for a write whose caller holds up an
   * answer that should go out within this turn: what one commit's resolutions set off in the
   * same run of promise jobs still shares one transaction.
   */
  run<T>(key: string, work: () => T, when: "turn" | "tick" = "turn"): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.keys.add(key);
      if (when === "tick" && !this.tickScheduled) {
        this.tickScheduled = true;
        process.nextTick(() => {
          this.tickScheduled = false;
          this.flush();
        });
      }
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.flush();
      });
    });
  }

  /**
   * Runs and commits what is queued for task `key`, now, and whatever was queued before it. A read
   * of one task needs nothing else flushed: no other task's write changes what it returns.
   */
  flushFor(key: string): void {
    if (this.keys.has(key)) this.flush();
  }

  /** Runs and commits what is queued, now. */
  flush(): void {
    const jobs = this.queue;
    if (jobs.length === 0) return;
    this.queue = [];
    this.keys = new Set();
    if (jobs.length === 1 || !this.db.open) {
      for (const job of jobs) runAlone(job);
      return;
    }
    const results: unknown[] = [];
    try {
      this.db.exec("BEGIN IMMEDIATE");
      for (const job of jobs) results.push(job.work());
      this.db.exec("COMMIT");
    } catch {
      try {
        if (this.db.inTransaction) this.db.exec("ROLLBACK");
      } catch {
        // Rolled back by SQLite itself already (some I/O errors do), or the connection is gone: each job finds out on its own.
      }
      for (const job of jobs) runAlone(job);
      return;
    }
    jobs.forEach((job, i) => job.resolve(results[i]));
  }
}

/** One write in its own (implicit) transaction, as the store ran every write before grouping. */
function runAlone(job: Job): void {
  try {
    job.resolve(job.work());
  } catch (error) {
    job.reject(error);
  }
}
