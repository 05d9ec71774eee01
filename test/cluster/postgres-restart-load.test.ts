/**
 * A PostgreSQL restart under load: two `serve` fronts and a `worker` on a PostgreSQL server of
 * this test's own, a steady stream of short `sleep` tasks on both fronts in both eras, and the
 * server restarted under it — as a crash (`pg_ctl stop -m immediate`) and as an orderly stop
 * (`-m fast`, 57P01 to every session). A finished handler's outcome is retried until stored, so
 * no task that ran fails; and every request the outage touched is answered with the retryable
 * store-unreachable error, never -32603.
 */
import { ownErrorOf } from "../../src/mcp/own-error-codes.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cluster } from "../support/cluster.js";
import { startPrivatePostgres, type PrivatePostgres } from "../support/private-postgres.js";
import { TaskLoad } from "../support/task-load.js";

let server: PrivatePostgres;
let cluster: Cluster;

beforeAll(async () => {
  server = await startPrivatePostgres();
  cluster = await Cluster.start({ fronts: 2, workers: 1, concurrency: 8, pgUrl: server.url, logLevel: "info" });
}, 90_000);

afterAll(async () => {
  await cluster?.stop();
  await server?.stop();
});

/** Waits until `load` has ended `n` more tasks. */
async function moreTasks(load: TaskLoad, n: number, timeoutMs = 30_000): Promise<void> {
  const goal = load.count + n;
  const deadline = Date.now() + timeoutMs;
  while (load.count < goal) {
    if (Date.now() > deadline) throw new Error(`only ${load.count} of ${goal} tasks ended; lanes broken: ${load.broken.join("; ")}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("cluster: PostgreSQL restarted under load", { timeout: 120_000 }, () => {
  it.each(["immediate", "fast"] as const)(
    "pg_ctl stop -m %s: 0 finished tasks failed, 0 -32603 answers, and work flows again",
    async (mode) => {
      const load = await TaskLoad.start(cluster.urls);
      try {
        await moreTasks(load, 20);
        await server.restart(mode, 500);
        await moreTasks(load, 20);
      } finally {
        await load.stop();
      }
      expect(load.broken).toEqual([]);
      expect(load.errors.filter((e) => ownErrorOf(e.code) !== "unavailable")).toEqual([]);
      expect(load.ended.filter((t) => t.status !== "completed")).toEqual([]);
      // The outage was seen: some request was answered with the retryable error, or some outcome retried.
      const retried = cluster.workers.some((w) => w.stderr.filter((l) => l["msg"] === "task store write failed; retrying").length > 0);
      expect(load.errors.length > 0 || retried).toBe(true);
      for (const worker of cluster.workers) {
        expect(
          worker.stderr.filter(
            (l) => l["msg"] === "could not store task outcome" || l["msg"] === "the outcome could not be stored before the lease ran out",
          ),
        ).toEqual([]);
      }
    },
  );
});
