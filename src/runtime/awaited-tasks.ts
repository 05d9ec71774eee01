/**
 * The tasks a request of this process is waiting on (a blocked result request, a call answered
 * inline, a subscription to its changes), so that the writes which end one or ask its requestor a
 * question can be committed at once: a store that groups its commits by event-loop turn would
 * otherwise hold the waiter's answer behind every request the rest of that turn brings. Writes
 * nobody waits on keep the cheaper grouping.
 */
export class AwaitedTasks {
  private readonly counts = new Map<string, number>();

  /** A request starts waiting on `taskId`. */
  enter(taskId: string): void {
    this.counts.set(taskId, (this.counts.get(taskId) ?? 0) + 1);
  }

  /** A request waiting on `taskId` got its answer or gave up. */
  leave(taskId: string): void {
    const count = this.counts.get(taskId) ?? 0;
    if (count <= 1) this.counts.delete(taskId);
    else this.counts.set(taskId, count - 1);
  }

  /** Whether any request of this process waits on `taskId`. */
  has(taskId: string): boolean {
    return this.counts.has(taskId);
  }
}
