/**
 * Cluster mode when parts of it fail, in real processes on a fresh PostgreSQL schema: a worker
 * SIGKILLed mid-task (its lease runs out: non-retryable work is failed with a clear statusMessage,
 * retryable work is re-run by the other worker), the LISTEN connections killed (re-established,
 * wake-ups cross nodes again), a front node SIGKILLed while a requestor waits on it (the requestor
 * calls again on the other front). Leases are short here (`--lease-ms 1500`) so the tests are quick.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Balancer, byMethod, Cluster, rpcKind } from "../support/cluster.js";
import { AnyResultSchema, callToolAsTask, expectRpcError, getTask, rpcError, taskResult } from "../support/conformance.js";
import { connectHttpClient, type HttpClient } from "../support/http-fixture.js";
import { pgQuery } from "../support/postgres.js";

const LEASE_MS = 1500;
/** The reaper looks for expired leases every second (LeaseReaper's default), on every node. */
const REAPER_INTERVAL_MS = 1000;

let cluster: Cluster;
const clients: HttpClient[] = [];

beforeAll(async () => {
  cluster = await Cluster.start({ fronts: 2, workers: 2, concurrency: 4, leaseMs: LEASE_MS });
}, 60_000);

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
});

afterAll(async () => {
  await cluster?.stop();
});

async function connect(balancer: Balancer): Promise<HttpClient> {
  const c = await connectHttpClient(balancer.url, { fetch: balancer.fetch });
  clients.push(c);
  return c;
}

/** Kills the worker and replaces it, so the next test has two workers again. */
async function killWorker(index: number): Promise<number> {
  const worker = cluster.workers[index];
  if (!worker) throw new Error(`no worker ${index}`);
  cluster.workers.splice(index, 1);
  await worker.kill("SIGKILL");
  return Date.now();
}

describe("cluster: a worker SIGKILLed mid-task", { timeout: 30_000 }, () => {
  it("fails a non-retryable task (sleep) within the lease time, with a statusMessage that says why", async () => {
    const balancer = new Balancer(cluster.urls);
    const c = await connect(balancer);
    balancer.route = byMethod({ "tools/call": 0, "tasks/result": 1, "tasks/get": 0 });
    const { task } = await callToolAsTask(c.client, "sleep", { ms: 60_000 });
    const worker = await cluster.claimer(task.taskId);
    // The requestor is already waiting on the other front when the worker dies.
    const waiting = rpcError(taskResult(c.client, task.taskId));

    const killedAt = await killWorker(cluster.workers.indexOf(worker));
    const error = await waiting;
    const answeredAfterMs = Date.now() - killedAt;
    expect(error.code).toBe(-32603);
    expect(error.message).toMatch(
      /worker stopped responding \(lease expired\); it was not re-run because it was created when its tool declared no recovery \("resume" or "retry"\)/,
    );
    // A lease renewed at most a third of LEASE_MS before the kill, then one reaper pass, then the
    // bus: well within twice the lease.
    expect(answeredAfterMs).toBeLessThan(LEASE_MS + REAPER_INTERVAL_MS + 1500);

    const failed = await getTask(c.client, task.taskId);
    expect(failed.status).toBe("failed");
    expect(failed.statusMessage).toBe(
      'The task\'s worker stopped responding (lease expired); it was not re-run because it was created when its tool declared no recovery ("resume" or "retry")',
    );
    await cluster.startWorker();
  });

  it("re-runs a retryable task (batch) on the other worker, which completes it", async () => {
    const balancer = new Balancer(cluster.urls);
    const c = await connect(balancer);
    balancer.route = byMethod({ "tools/call": 1, "tasks/result": 0, "tasks/get": 1 });
    const { task } = await callToolAsTask(c.client, "batch", { ms: 2500 });
    const first = await cluster.claimer(task.taskId);
    const waiting = taskResult(c.client, task.taskId);

    await killWorker(cluster.workers.indexOf(first));
    const second = await cluster.claimer(task.taskId, 10_000);
    expect(second).not.toBe(first);
    // While it runs again, the task says what happened.
    const rerun = await getTask(c.client, task.taskId);
    expect(rerun.status).toBe("working");
    expect(rerun.statusMessage).toBe(
      "The worker running this task stopped renewing its lease; the task was queued to run again (attempt 2 of 3)",
    );

    expect((await waiting).content).toEqual([{ type: "text", text: "slept 2500 ms" }]);
    expect((await getTask(c.client, task.taskId)).status).toBe("completed");
    await second.stderr.waitFor((l) => l["audit"] === "completed" && l["taskId"] === task.taskId, "the second worker to complete it");
    // Exactly one node re-queued it: every node runs the reaper, the store's CAS lets one win.
    const requeued = [...cluster.fronts, ...cluster.workers].flatMap((p) =>
      p.stderr.filter((l) => l["audit"] === "requeued" && l["taskId"] === task.taskId),
    );
    expect(requeued).toHaveLength(1);
    await cluster.startWorker();
  });
});

describe("cluster: PostgreSQL LISTEN connections killed", { timeout: 30_000 }, () => {
  it("every node re-establishes LISTEN; a waiter blocked across the outage is answered and new cross-node wake-ups work", async () => {
    const balancer = new Balancer(cluster.urls);
    const c = await connect(balancer);
    balancer.route = byMethod({ "tools/call": 0, "tasks/result": 1 });
    const { task } = await callToolAsTask(c.client, "sleep", { ms: 1500 });
    await cluster.claimer(task.taskId);
    const blocked = taskResult(c.client, task.taskId);

    // Every front listens, and the worker running the task; a standby running nothing may not
    // (docs/deployment.md, one wake per new task), and its connection is killed all the same.
    const live = [...cluster.fronts, ...cluster.workers];
    const reestablished = (): number => live.reduce((n, p) => n + p.stderr.filter((l) => l["msg"] === "LISTEN re-established").length, 0);
    const before = reestablished();
    const killed = await pgQuery("SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE query = $1 OR query = $2", [
      `LISTEN ${cluster.channel}`,
      `UNLISTEN ${cluster.channel}`,
    ]);
    expect(killed.rowCount).toBe(live.length);
    const deadline = Date.now() + 10_000;
    while (reestablished() < before + live.length) {
      if (Date.now() > deadline)
        throw new Error(`only ${reestablished() - before} of ${live.length} nodes re-established their LISTEN connection`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const listening = await pgQuery("SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = $1", [`LISTEN ${cluster.channel}`]);
    expect(listening.rows[0]?.["n"]).toBeGreaterThanOrEqual(cluster.fronts.length + 1);

    expect((await blocked).content).toEqual([{ type: "text", text: "slept 1500 ms" }]);

    // New work: a worker is woken by the creation on front 0 and front 1's waiter by the
    // completion, both through the re-established LISTENs. Without them the claim would wait for
    // the pool's 5 s safety re-check and the waiter for its 30 s backstop.
    const started = Date.now();
    const next = (await callToolAsTask(c.client, "sleep", { ms: 100 })).task;
    expect((await taskResult(c.client, next.taskId)).content).toEqual([{ type: "text", text: "slept 100 ms" }]);
    expect(Date.now() - started).toBeLessThan(2500);
  });
});

describe("cluster: a front node SIGKILLed while a requestor waits on it", { timeout: 30_000 }, () => {
  it("loses nothing: the requestor calls tasks/result again on the other front and gets the result", async () => {
    const balancer = new Balancer(cluster.urls);
    const c = await connect(balancer);
    balancer.route = byMethod({ "tools/call": 0, "tasks/result": 1, "tasks/get": 0 });
    const { task } = await callToolAsTask(c.client, "sleep", { ms: 1500 });
    await cluster.claimer(task.taskId);
    const abandon = new AbortController();
    const first = c.client
      .request({ method: "tasks/result", params: { taskId: task.taskId } }, AnyResultSchema, { signal: abandon.signal })
      .then(
        () => "answered",
        () => "abandoned",
      );
    // A tasks/result that needs no stream is answered as one JSON response, headers included,
    // when the task ends: the request shows only as forwarded while front 1 blocks on it.
    await balancer.forwarded.waitFor((r) => rpcKind(r) === "tasks/result" && r.node === 1, "the tasks/result request to reach front 1");
    await new Promise((resolve) => setTimeout(resolve, 200));

    await cluster.fronts[1]!.kill("SIGKILL");
    // The SDK client does not resume a POST stream that carried no event id; a requestor that saw
    // its connection drop gives up on that request and asks again, wherever the balancer sends it.
    abandon.abort("connection lost");
    expect(await first).toBe("abandoned");
    balancer.route = () => 0;
    const result = await taskResult(c.client, task.taskId);
    expect(result.content).toEqual([{ type: "text", text: "slept 1500 ms" }]);
    expect((await getTask(c.client, task.taskId)).status).toBe("completed");
    await expectRpcError(getTask(c.client, "no-such-task"), -32602);
  });
});
