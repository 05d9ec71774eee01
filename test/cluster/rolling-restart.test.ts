/**
 * A rolling restart of a cluster's workers fails nothing: real `worker`
 * processes and a `serve --workers 0` front on a fresh PostgreSQL schema. A worker SIGTERMed
 * mid-task drains — claims nothing more, its handlers get `--drain-timeout`, what still runs is
 * handed back — and another worker claims the task at once (not after the 30 s lease runs out)
 * and completes it, retryable or not.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Balancer, Cluster } from "../support/cluster.js";
import { callToolAsTask, getTask, taskResult } from "../support/conformance.js";
import { connectHttpClient, type HttpClient } from "../support/http-fixture.js";
import type { CliProcess } from "../support/cli-process.js";

let cluster: Cluster;
const clients: HttpClient[] = [];

beforeAll(async () => {
  // The default 30 s lease: a task completed well before it ran out was handed back, not reaped.
  cluster = await Cluster.start({ fronts: 1, workers: 2, concurrency: 4, workerArgs: ["--drain-timeout", "300"] });
}, 60_000);

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
});

afterAll(async () => {
  await cluster?.stop();
});

async function connect(): Promise<HttpClient> {
  const balancer = new Balancer(cluster.urls);
  const c = await connectHttpClient(balancer.url, { fetch: balancer.fetch });
  clients.push(c);
  return c;
}

/** SIGTERMs the worker (it drains and exits 0) and drops it from the cluster's list. */
async function drainWorker(worker: CliProcess): Promise<void> {
  cluster.workers.splice(cluster.workers.indexOf(worker), 1);
  expect(await worker.kill("SIGTERM")).toEqual({ code: 0, signal: null });
}

describe("cluster: rolling restart of the workers", { timeout: 120_000 }, () => {
  it("a worker SIGTERMed mid-task hands it back; the other worker claims it at once and completes it; nothing failed", async () => {
    const c = await connect();
    // sleep is not retryable: a lease that ran out would have failed it.
    const { task } = await callToolAsTask(c.client, "sleep", { ms: 3000 });
    const first = await cluster.claimer(task.taskId);
    const waiting = taskResult(c.client, task.taskId);
    await drainWorker(first);
    expect(first.stderr.items.map((l) => [l["audit"], l["taskId"]])).toContainEqual(["handed_back", task.taskId]);

    const second = await cluster.claimer(task.taskId);
    expect(second).not.toBe(first);
    expect((await waiting).content).toEqual([{ type: "text", text: "slept 3000 ms" }]);
    expect((await getTask(c.client, task.taskId)).status).toBe("completed");
    await cluster.startWorker();
  });

  it("restarting every worker in turn while tasks run fails none of them: all complete", async () => {
    const c = await connect();
    const ms = (i: number): number => 8000 + i * 100;
    const tasks = await Promise.all(Array.from({ length: 6 }, (_, i) => callToolAsTask(c.client, "sleep", { ms: ms(i) })));
    await Promise.all(tasks.map(({ task }) => cluster.claimer(task.taskId)));
    const waiting = tasks.map(({ task }) => taskResult(c.client, task.taskId));
    const drained: CliProcess[] = [];
    for (const old of [...cluster.workers]) {
      await cluster.startWorker();
      await drainWorker(old);
      drained.push(old);
    }
    const results = await Promise.all(waiting);
    expect(results.map((r) => r.content)).toEqual(tasks.map((_, i) => [{ type: "text", text: `slept ${ms(i)} ms` }]));
    for (const { task } of tasks) expect((await getTask(c.client, task.taskId)).status).toBe("completed");
    // Work was in flight when the workers went (the drain path was taken), and none of it failed.
    const ids = new Set(tasks.map(({ task }) => task.taskId));
    expect(
      drained.flatMap((p) => p.stderr.filter((l) => l["audit"] === "handed_back" && ids.has(l["taskId"] as string))).length,
    ).toBeGreaterThan(0);
    const everyone = [...cluster.fronts, ...cluster.workers, ...drained];
    expect(everyone.flatMap((p) => p.stderr.filter((l) => l["audit"] === "failed" || l["audit"] === "lease_lost"))).toEqual([]);
  });
});
