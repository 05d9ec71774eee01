/**
 * Which node ran each run of a task, on a real cluster: one `serve --workers 0` front with the web
 * view and workers started one by one on a fresh PostgreSQL schema. A task's first worker is
 * SIGKILLed mid-run; the second takes the task over once the lease runs out and finishes it. The
 * timeline (`GET /tasks/api/tasks/:id/timeline` and `mcp-tasks tasks get --history`) names the
 * worker of each run — the lost one and the one that finished — read from what the store wrote
 * with the task's status changes, long after the first worker is gone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TaskTimeline } from "../../src/web/task-timeline.js";
import { runCli, type CliProcess } from "../support/cli-process.js";
import { Cluster } from "../support/cluster.js";
import { isTerminal, pollTask, statelessResult } from "../support/stateless-client.js";
import { webApi } from "../support/web-client.js";

const ADMIN_TOKEN = "admin-token-for-the-run-nodes-test";
const LEASE_MS = 2000;

let cluster: Cluster;
let front: string;

beforeAll(async () => {
  cluster = await Cluster.start({
    fronts: 1,
    workers: 0,
    concurrency: 2,
    leaseMs: LEASE_MS,
    logLevel: "debug",
    web: true,
    frontArgs: ["--admin-token", ADMIN_TOKEN],
    toolArgs: ["--demo", "--tools", "test/support/fencing-tools.ts"],
  });
  front = String(cluster.urls[0]);
}, 90_000);

afterAll(async () => {
  await cluster?.stop();
});

const workerIdOf = (worker: CliProcess): string => String(worker.stderr.items.find((l) => l["msg"] === "worker started")?.["workerId"]);

describe("the timeline names the node of each run", { timeout: 120_000 }, () => {
  let taskId = "";
  let lost = "";
  let finisher = "";

  beforeAll(async () => {
    const first = await cluster.startWorker({ env: { MCP_TASKS_TEST_WORKER: "A" } });
    lost = workerIdOf(first);
    taskId = String((await statelessResult(front, "tools/call", { name: "whoami", arguments: { ms: 4000 } }))["taskId"]);
    await first.stderr.waitFor((l) => l["msg"] === "claimed task" && l["taskId"] === taskId, "the first worker to claim the task", 20_000);
    await first.kill("SIGKILL");
    const second = await cluster.startWorker({ env: { MCP_TASKS_TEST_WORKER: "B" } });
    finisher = workerIdOf(second);
    expect(await pollTask(front, taskId, isTerminal, {}, 60_000)).toMatchObject({
      status: "completed",
      result: { structuredContent: { worker: "B" } },
    });
  }, 90_000);

  it("the lost run names the killed worker and the finished run the worker that took it over (API)", async () => {
    const answer = await webApi(new URL(front), `/tasks/api/tasks/${taskId}/timeline`, ADMIN_TOKEN);
    expect(answer.status).toBe(200);
    const timeline = answer.json as unknown as TaskTimeline;
    expect(lost).not.toBe(finisher);
    expect(timeline.runs.map((run) => ({ ended: run.ended, node: run.node }))).toEqual([
      { ended: "lost", node: lost },
      { ended: "finished", node: finisher },
    ]);
  });

  it("each status change a worker wrote or held the task for names it; the creation names none", async () => {
    const answer = await webApi(new URL(front), `/tasks/api/tasks/${taskId}/timeline`, ADMIN_TOKEN);
    const { status } = answer.json as unknown as TaskTimeline;
    expect(status[0]).not.toHaveProperty("node");
    expect(status.find((change) => change.statusMessage?.startsWith("The worker running this task stopped renewing"))?.node).toBe(lost);
    expect(status.at(-1)).toMatchObject({ status: "completed", node: finisher });
  });

  it("mcp-tasks tasks get --history prints the node of each run", async () => {
    const run = await runCli(["tasks", "get", front, taskId, "--history", "--token", ADMIN_TOKEN]);
    expect(run.code).toBe(0);
    const runs = run.stdout.split("\n").filter((line) => /\brun {7}\d/.test(line));
    expect(runs).toHaveLength(2);
    expect(runs[0]).toContain(`lost after`);
    expect(runs[0]).toContain(`on ${lost}`);
    expect(runs[1]).toContain(`on ${finisher}`);
  });
});
