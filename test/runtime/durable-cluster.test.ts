/**
 * Durable execution in cluster mode (docs/durable-execution.md): a worker SIGKILLed in the
 * middle of a `steps` task loses its lease; the reaper re-queues the task (recovery "resume") and
 * the other worker resumes it from its checkpoints in PostgreSQL. Real processes on a fresh
 * schema, short leases so the test is quick.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Balancer, byMethod, Cluster } from "../support/cluster.js";
import { callToolAsTask, getTask, taskResult } from "../support/conformance.js";
import { connectHttpClient, type HttpClient } from "../support/http-fixture.js";
import { pgQuery } from "../support/postgres.js";

let cluster: Cluster;
const clients: HttpClient[] = [];

beforeAll(async () => {
  cluster = await Cluster.start({ fronts: 1, workers: 2, concurrency: 4, leaseMs: 1500 });
}, 60_000);
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
});
afterAll(async () => {
  await cluster?.stop();
});

async function checkpointsOf(taskId: string): Promise<number> {
  const rows = await pgQuery(`SELECT count(*)::int AS n FROM ${cluster.schema}.task_checkpoints WHERE task_id = $1`, [taskId]);
  return (rows.rows[0] as { n: number }).n;
}

describe("cluster: a worker SIGKILLed mid-steps", { timeout: 60_000 }, () => {
  it("another worker resumes the task from its checkpoints, and its result counts the restored steps", async () => {
    const balancer = new Balancer(cluster.urls);
    const c = await connectHttpClient(balancer.url, { fetch: balancer.fetch });
    clients.push(c);
    balancer.route = byMethod({ "tools/call": 0, "tasks/result": 0, "tasks/get": 0 });
    const count = 30;
    const { task } = await callToolAsTask(c.client, "steps", { count, ms: 100 });
    const first = await cluster.claimer(task.taskId);
    const deadline = Date.now() + 20_000;
    while ((await checkpointsOf(task.taskId)) < 3) {
      if (Date.now() > deadline) throw new Error("timed out waiting for three checkpointed steps");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    cluster.workers.splice(cluster.workers.indexOf(first), 1);
    await first.kill("SIGKILL");
    const kept = await checkpointsOf(task.taskId);

    const second = await cluster.claimer(task.taskId, 15_000);
    expect(second).not.toBe(first);
    const result = await taskResult(c.client, task.taskId);
    const summary = result.structuredContent as { count: number; ran: number; restored: number };
    expect(summary.restored).toBeGreaterThanOrEqual(kept);
    expect(summary.restored).toBeGreaterThan(0);
    expect(summary.ran + summary.restored).toBe(count);
    expect((await getTask(c.client, task.taskId)).status).toBe("completed");
    await cluster.startWorker();
  });
});
