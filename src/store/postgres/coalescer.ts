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
 *
 * One batch in flight by default: under load, a second one in flight halves the batches (twice the
 * statements and commits) for no gain, since the machine that runs them is the bottleneck. Measured
 * with npm run bench:cluster, runs alternated 2-1-1-2 on a loaded 2-core machine: 1.3-1.4 commits per
 * task with 1 worker against 2.1-2.2, 1.7-1.8 with 2 workers against 1.9-2.4, and CPU per task
 * 2.7-3.3 ms against 3.3-5.1 ms. Idle, nothing changes: a call with nothing in flight goes at once.
 */
export function coalescer<I, R>(
  runBatch: (items: I[]) => Promise<R[]>,
  options: { maxInFlight?: number; maxBatch?: number; lingerMs?: number } = {},
): (item: I) => Promise<R> {
  const maxInFlight = options.maxInFlight ?? 1;
  const maxBatch = options.maxBatch ?? 256;
  const lingerMs = options.lingerMs ?? 0;
  let inFlight = 0;
  let waiting: Array<{ item: I; resolve: (result: R) => void; reject: (error: unknown) => void }> = [];
  let lingering: NodeJS.Timeout | null = null;

  const send = (): void => {
    if (lingerMs > 0 && waiting.length > 0 && waiting.length < maxBatch && inFlight < maxInFlight) {
      // A caller that waits anyway (lingerMs): the calls of the next moment go out with this one.
      lingering ??= setTimeout(() => {
        lingering = null;
        flush();
      }, lingerMs);
      return;
    }
    flush();
  };
  const flush = (): void => {
    if (lingering !== null) {
      clearTimeout(lingering);
      lingering = null;
    }
    while (inFlight < maxInFlight && waiting.length > 0) {
      const batch = waiting.slice(0, maxBatch);
      waiting = waiting.slice(batch.length);
      inFlight++;
      runBatch(batch.map((call) => call.item))
        .then(
          (results) => batch.forEach((call, i) => call.resolve(results[i] as R)),
          (error: unknown) => batch.forEach((call) => call.reject(error)),
        )
        .finally(() => {
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
