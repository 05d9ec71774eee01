/**
 * The tasks whose result this process has already recorded as fetched (`TaskStore.markFetched`),
 * so that a result fetched again (a 2026-07-28 requestor polling `tasks/get` on a finished task
 * gets the result each time) costs no write transaction that would change nothing. Bounded: the
 * oldest ids are forgotten first, and a forgotten id costs one more harmless write. Another
 * process sharing the store keeps its own; the store's `fetched_at IS NULL` guard makes the mark
 * once-only either way.
 */
export class FetchedMarks {
  private readonly ids = new Set<string>();

  constructor(private readonly capacity = 10_000) {}

  /** Whether `taskId`'s mark was already written by this process. */
  has(taskId: string): boolean {
    return this.ids.has(taskId);
  }

  /** Remembers that `taskId`'s mark is written (call once the write succeeded). */
  add(taskId: string): void {
    if (this.ids.has(taskId)) return;
    this.ids.add(taskId);
    if (this.ids.size > this.capacity) {
      // A Set iterates in insertion order: the first id is the oldest.
      for (const oldest of this.ids) {
        this.ids.delete(oldest);
        break;
      }
    }
  }
}
