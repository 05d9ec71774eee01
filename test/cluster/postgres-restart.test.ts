/**
 * Cluster mode across a real PostgreSQL restart (issue: "PostgreSQL restart: nodes reconnect and
 * go on; LISTEN is re-established"). The cluster runs on a PostgreSQL server of this test's own
 * (test/support/private-postgres.ts), stopped and started again while a worker runs a task and a
 * requestor waits on a front for its result.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Balancer, Cluster } from "../support/cluster.js";
import { callToolAsTask, getTask, taskResult } from "../support/conformance.js";
import { connectHttpClient, type HttpClient } from "../support/http-fixture.js";
import { startPrivatePostgres, type PrivatePostgres } from "../support/private-postgres.js";

let server: PrivatePostgres;
let cluster: Cluster;
let client: HttpClient | undefined;

beforeAll(async () => {
  server = await startPrivatePostgres();
  cluster = await Cluster.start({ fronts: 2, workers: 1, pgUrl: server.url });
}, 90_000);

afterAll(async () => {
  await client?.close().catch(() => {});
  await cluster?.stop();
  await server?.stop();
});

const text = (value: string) => [{ type: "text", text: value }];

describe("cluster: PostgreSQL restarts", { timeout: 60_000 }, () => {
  it("a task running across the restart completes, the requestor waiting on a front gets its result, every node LISTENs again, and new work flows", async () => {
    const balancer = new Balancer(cluster.urls);
    client = await connectHttpClient(balancer.url, { fetch: balancer.fetch });
    const { task } = await callToolAsTask(client.client, "sleep", { ms: 2500 });
    await cluster.claimer(task.taskId);
    const result = taskResult(client.client, task.taskId);
    await balancer.forwarded.waitFor((r) => r.body?.method === "tasks/result", "the tasks/result request to reach a front");

    await server.restart();

    expect((await result).content).toEqual(text("slept 2500 ms"));
    for (const node of [...cluster.fronts, ...cluster.workers]) {
      await node.stderr.waitFor((l) => l["msg"] === "LISTEN re-established", "every node to LISTEN again", 15_000);
    }
    const after = await callToolAsTask(client.client, "sleep", { ms: 10 });
    expect((await taskResult(client.client, after.task.taskId)).content).toEqual(text("slept 10 ms"));
    expect((await getTask(client.client, task.taskId)).status).toBe("completed");
  });
});
