/**
 * An append-only log that tests can wait on: `waitFor` resolves with the first entry (already
 * logged or still to come) that matches, so tests wait on events rather than sleeping. The
 * timeout is only a safety net that turns a hang into a readable failure.
 */
export class Recorder<T> {
  readonly items: T[] = [];
  private waiters: { match: (item: T) => boolean; resolve: (item: T) => void }[] = [];

  push(item: T): void {
    this.items.push(item);
    const ready = this.waiters.filter((w) => w.match(item));
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const waiter of ready) waiter.resolve(item);
  }

  /** Entries matching `match`, in arrival order. */
  filter(match: (item: T) => boolean): T[] {
    return this.items.filter(match);
  }

  waitFor(match: (item: T) => boolean, what: string, timeoutMs = 10_000): Promise<T> {
    const found = this.items.find(match);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise<T>((resolve, reject) => {
      const waiter = {
        match,
        resolve: (item: T) => {
          clearTimeout(timer);
          resolve(item);
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }
}
