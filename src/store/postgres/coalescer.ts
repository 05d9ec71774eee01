/**
 * Turns single-item calls into batched statements without adding latency: a call goes out at once
 * while fewer than `maxInFlight` batches are in flight; calls made meanwhile wait and go out
 * together, as one statement, when a batch comes back. Idle, every call is its own statement;
 * under load, one statement (one round trip, one commit) serves many calls. This is what lets the
 * busiest statements of a cluster — a task's creation, its lookup — scale past one round trip
 * per call: on a small machine each statement's fixed cost (the driver, the socket, PostgreSQL's
 * per-statement work and commit) outweighs the row it writes.
 *
 * `runBatch` answers the batch's items in their order; if it throws, every call of the batch
 * rejects with that error.
 */
export function coalescer<I, R>(runBatch: (items: I[]) => Promise<R[]>, options: { maxInFlight?: number; maxBatch?: number } = {}): (item: I) => Promise<R> {
  const maxInFlight = options.maxInFlight ?? 2;
  const maxBatch = options.maxBatch ?? 256;
  let inFlight = 0;
  let waiting: Array<{ item: I; resolve: (result: R) => void; reject: (error: unknown) => void }> = [];

  const send = (): void => {
    while (inFlight < maxInFlight && waiting.length > 0) {
      const batch = waiting.slice(0, maxBatch);
      waiting = waiting.slice(batch.length);
      inFlight++;
      runBatch(batch.map((call) => call.item)).then(
        (results) => batch.forEach((call, i) => call.resolve(results[i] as R)),
        (error: unknown) => batch.forEach((call) => call.reject(error)),
      ).finally(() => {
        inFlight--;
        send();
      });
    }
  };

  return (item) =>
    new Promise<R>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      send();
    });
}
