/**
 * Waiting costs nothing, across a cluster (docs/durable-execution.md, Waiting): a task parked by
 * one worker holds nothing of it — the worker can die — and any other worker resumes it when its
 * time comes or its event arrives, emitted through any front. Real `serve` fronts and `worker`
 * processes on a fresh PostgreSQL schema, in both eras from one table through TaskClient (the
 * requestor's calls routed to fronts by method, as a balancer would spread them).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ProtocolRevision } from "../../src/mcp/requestor/requestor-eras.js";
import { TaskClient } from "../../src/client/task-client.js";
import { Balancer, byMethod, Cluster } from "../support/cluster.js";
import type { CliProcess } from "../support/cli-process.js";

let cluster: Cluster;
const clients: TaskClient[] = [];

beforeAll(async () => {
  cluster = await Cluster.start({ fronts: 2, workers: 2, concurrency: 2, leaseMs: 1500 });
}, 60_000);

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
});

afterAll(async () => {
  await cluster?.stop();
});

async function connect(balancer: Balancer, protocol: ProtocolRevision): Promise<TaskClient> {
  const c = await TaskClient.connect(balancer.url, { protocol, fetch: balancer.fetch as typeof fetch });
  clients.push(c);
  return c;
}

async function asTask(c: TaskClient, tool: string, args: Record<string, unknown>) {
  const made = await c.callTool(tool, args, { task: true });
  if (made.kind !== "task") throw new Error("expected a task");
  return made.task;
}

/** Waits until `worker` says it parked the task, then SIGKILLs it and starts a replacement for the next test. */
async function parkedThenKilled(worker: CliProcess, taskId: string): Promise<void> {
  await worker.stderr.waitFor((l) => l["taskId"] === taskId && String(l["msg"]).startsWith("task parked"), "the task to be parked");
  cluster.workers.splice(cluster.workers.indexOf(worker), 1);
  await worker.kill("SIGKILL");
}

const ERAS: ProtocolRevision[] = ["2025-11-25", "2026-07-28"];

describe.each(ERAS)("cluster under %s: a parked task outlives the worker that parked it", { timeout: 45_000 }, (protocol) => {
  it("a nap whose time comes while its worker is dead is resumed and completed by another worker", async () => {
    const balancer = new Balancer(cluster.urls);
    balancer.route = byMethod({ "tools/call": 0, "tasks/result": 1, "tasks/get": 1 });
    const c = await connect(balancer, protocol);
    const task = await asTask(c, "nap", { ms: 2500 });
    const first = await cluster.claimer(task.id);
    await parkedThenKilled(first, task.id);
    const parked = await task.status();
    expect(parked.status).toBe("working");
    expect(parked.statusMessage).toMatch(/^Sleeping until /);

    const result = await task.result();
    expect(result.content).toEqual([{ type: "text", text: expect.stringMatching(/^napped until /) }]);
    const survivor = cluster.workers[0] as CliProcess;
    await survivor.stderr.waitFor((l) => l["audit"] === "completed" && l["taskId"] === task.id, "the other worker to complete it");
    await cluster.startWorker();
  });

  it("an approval parked by a worker that then died is resumed by the other worker when the event arrives through the other front", async () => {
    const balancer = new Balancer(cluster.urls);
    balancer.route = byMethod({ "tools/call": 0, "tasks/result": 0, "tasks/get": 0 });
    const c = await connect(balancer, protocol);
    const task = await asTask(c, "approve", { action: "deploy v2" });
    const first = await cluster.claimer(task.id);
    await parkedThenKilled(first, task.id);

    const emitted = await fetch(new URL(`/events/approval/${task.id}`, cluster.urls[1]), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ approved: true, by: "ops" }),
    });
    expect(emitted.status).toBe(200);
    expect(await emitted.json()).toMatchObject({ woken: 1 });

    const result = await task.result();
    expect(result.content).toEqual([{ type: "text", text: "approved by ops: deploy v2" }]);
    await cluster.startWorker();
  });
});
