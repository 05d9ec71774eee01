import type { TaskStore } from "../../store/task-store.js";

/** Which per-owner cap a creation would break, or null when it may go ahead. */
export type OwnerCap = "active_tasks" | "stored_tasks" | null;

export interface OwnerCountsOptions {
  maxActive: number;
  maxStored: number;
  /** How long counts read from the store are trusted while far from both caps. Default 1000 ms. */
  refreshMs?: number;
  now: () => number;
}

interface Entry {
  /** Counts as last read from the store, plus this process's creations since. */
  active: number;
  stored: number;
  readAt: number;
  /** Creations admitted here and not yet written (or given up): a read may not see them yet. */
  inFlight: number;
  /** Creations written while a read was under way: its counts may have missed them. */
  writtenWhileReading: number;
  reading: Promise<void> | null;
}

/** Owners remembered at most; the least recently read are dropped first (they are re-read). */
const MAX_ENTRIES = 10_000;

/**
 * The per-owner caps on active and stored tasks (T-TTL-7), without two count queries per creation.
 * Counting an owner's stored tasks scans up to `maxStored` index entries; on every creation that
 * was a front node's costliest statement. Instead each owner's counts are read from the store at
 * most once per `refreshMs`, this process's own creations are added as they happen, and the store
 * is read again whenever the estimate reaches a cap — so on one node a cap is exact (an estimate
 * only ever over-counts: finished or swept tasks are noticed at the next read), and across nodes
 * an owner can exceed it by what the other nodes created within one refresh interval.
 */
export class OwnerCounts {
  private readonly entries = new Map<string | null, Entry>();
  private readonly refreshMs: number;

  constructor(
    private readonly store: Pick<TaskStore, "countActive" | "countStored">,
    private readonly options: OwnerCountsOptions,
  ) {
    this.refreshMs = options.refreshMs ?? 1000;
  }

  /**
   * Reserves one creation for `owner`, or names the cap it would break. A reservation must end
   * with {@link settle}: written or not.
   */
  async reserve(owner: string | null): Promise<OwnerCap> {
    let entry = this.entries.get(owner);
    if (!entry || this.options.now() - entry.readAt >= this.refreshMs || this.atCap(entry)) {
      entry = await this.read(owner);
    }
    if (entry.active >= this.options.maxActive) return "active_tasks";
    if (entry.stored >= this.options.maxStored) return "stored_tasks";
    entry.active++;
    entry.stored++;
    entry.inFlight++;
    return null;
  }

  /** Ends a reservation; `created` false gives its place back. */
  settle(owner: string | null, created: boolean): void {
    const entry = this.entries.get(owner);
    if (!entry) return;
    entry.inFlight = Math.max(0, entry.inFlight - 1);
    if (created && entry.reading) entry.writtenWhileReading++;
    if (!created) {
      entry.active = Math.max(0, entry.active - 1);
      entry.stored = Math.max(0, entry.stored - 1);
    }
  }

  private atCap(entry: Entry): boolean {
    return entry.active >= this.options.maxActive || entry.stored >= this.options.maxStored;
  }

  /** Reads the owner's counts (one read at a time per owner; concurrent callers share it). */
  private async read(owner: string | null): Promise<Entry> {
    let entry = this.entries.get(owner);
    if (entry?.reading) {
      await entry.reading;
      return entry;
    }
    if (!entry) {
      if (this.entries.size >= MAX_ENTRIES) this.dropOldest();
      entry = { active: 0, stored: 0, readAt: -Infinity, inFlight: 0, writtenWhileReading: 0, reading: null };
      this.entries.set(owner, entry);
    }
    const target = entry;
    target.writtenWhileReading = 0;
    target.reading = (async () => {
      try {
        const [active, stored] = await Promise.all([this.store.countActive(owner), this.store.countStored(owner)]);
        // Reserved creations still being written, or written since the counts were taken, may be
        // missing from what the store counted (counting one twice only over-counts).
        const unseen = target.inFlight + target.writtenWhileReading;
        target.active = active + unseen;
        target.stored = stored + unseen;
        target.readAt = this.options.now();
      } finally {
        target.reading = null;
      }
    })();
    await target.reading;
    return target;
  }

  private dropOldest(): void {
    let oldest: string | null | undefined;
    let oldestAt = Infinity;
    for (const [owner, entry] of this.entries) {
      if (entry.reading === null && entry.inFlight === 0 && entry.readAt < oldestAt) {
        oldest = owner;
        oldestAt = entry.readAt;
      }
    }
    if (oldest !== undefined) this.entries.delete(oldest);
  }
}
