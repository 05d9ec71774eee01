/**
 * `mcp-tasks gateway` on the PostgreSQL cluster, in real processes on a fresh schema: two
 * `gateway --workers 0` fronts and two `worker --upstream-stdio …` processes, each with its own
 * real `@modelcontextprotocol/server-everything` over stdio, driven by the official SDK client
 * through a balancer without sticky sessions. A gateway task runs on a worker (the fronts run no
 * handlers): the worker's upstream does the work, its progress and elicitation reach the
 * requestor through the other front, and a worker SIGKILLed mid-task leaves its task to the
 * recovery its tool's config gives it (fail with a clear message, or re-run on the other worker).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ElicitRequestSchema, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runCli, type CliProcess } from "../support/cli-process.js";
import { Balancer, byMethod, Cluster } from "../support/cluster.js";
import { callToolAsTask, cancelTask, expectRpcError, getTask, RELATED_TASK, taskResult } from "../support/conformance.js";
import { connectHttpClient, type ConnectOptions, type HttpClient } from "../support/http-fixture.js";
import { EVERYTHING, eventually, nodeCommand } from "./gateway-fixture.js";

/** Short leases, so a lost worker is noticed in seconds (the reaper looks every second). */
const LEASE_MS = 2000;
const LONG = "trigger-long-running-operation";
const ELICIT = "trigger-elicitation-request";

const dir = mkdtempSync(join(tmpdir(), "gateway-cluster-"));
const configFile = join(dir, "gateway.json");
// The long-running operation is idempotent (its annotations say so): re-run it on another worker.
// Everything else keeps the default recovery, "fail".
writeFileSync(configFile, JSON.stringify({ tools: { [LONG]: { recovery: "retry" } } }));

let cluster: Cluster;
const clients: HttpClient[] = [];
/** The upstream processes started by the cluster's processes, killed at the end whatever happens to their parents. */
const upstreams = new Set<number>();

function childrenOf(process: CliProcess): number[] {
  try {
    return execFileSync("ps", ["-o", "pid=", "--ppid", String(process.pid)], { encoding: "utf8" })
      .split("\n")
      .map((s) => Number(s.trim()))
      .filter((n) => n > 0);
  } catch {
    return []; // no children (ps exits 1)
  }
}

function noteUpstreams(): void {
  for (const p of [...cluster.fronts, ...cluster.workers]) for (const pid of childrenOf(p)) upstreams.add(pid);
}

beforeAll(async () => {
  cluster = await Cluster.start({
    frontCommand: "gateway",
    toolArgs: ["--upstream-stdio", nodeCommand(EVERYTHING, "stdio"), "--config", configFile],
    fronts: 2,
    workers: 2,
    concurrency: 4,
    leaseMs: LEASE_MS,
    startTimeoutMs: 60_000,
  });
  noteUpstreams();
}, 180_000);

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
});

afterAll(async () => {
  if (cluster) noteUpstreams();
  // The upstreams first: they hold their parents' stderr open, and a killed parent is only
  // reaped once its output ends.
  killUpstreams([...upstreams]);
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function killUpstreams(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}

async function connect(balancer: Balancer, options: ConnectOptions = {}): Promise<HttpClient> {
  const c = await connectHttpClient(balancer.url, { ...options, fetch: balancer.fetch });
  clients.push(c);
  return c;
}

/**
 * SIGKILLs a worker, then its upstream, as the loss of the worker's machine would. (Left alone,
 * server-everything outlives a SIGKILLed parent: it does not exit when its stdin closes.)
 */
async function killWorker(worker: CliProcess): Promise<void> {
  const children = childrenOf(worker);
  cluster.workers.splice(cluster.workers.indexOf(worker), 1);
  const exited = worker.kill("SIGKILL");
  killUpstreams(children);
  await exited;
}

async function replaceWorker(): Promise<void> {
  await cluster.startWorker();
  noteUpstreams();
}

const claimedBy = (p: CliProcess, taskId: string): boolean =>
  p.stderr.filter((l) => l["msg"] === "claimed task" && l["taskId"] === taskId).length > 0;

describe("gateway on the PostgreSQL cluster (2 fronts, 2 workers, server-everything over stdio)", { timeout: 120_000 }, () => {
  it("lists the upstream's tools on both fronts; a worker without --demo/--tools runs the gateway's tools", async () => {
    for (const url of cluster.urls) {
      const c = await connectHttpClient(url);
      clients.push(c);
      const { tools } = await c.client.listTools();
      expect(tools.find((t) => t.name === LONG)?.execution?.taskSupport).toBe("optional");
    }
    for (const worker of cluster.workers) {
      const started = worker.stderr.items.find((l) => l["msg"] === "worker started");
      expect(started?.["tools"]).toEqual(expect.arrayContaining([LONG, ELICIT, "echo"]));
    }
  });

  it("runs a task made on front A on a worker: its upstream's progress is relayed, its result fetched through front B", async () => {
    const balancer = new Balancer(cluster.urls);
    const c = await connect(balancer);
    balancer.route = byMethod({ "tools/call": 0, "tasks/result": 1, "tasks/get": 1 });
    const created = await callToolAsTask(c.client, LONG, { duration: 3, steps: 3 }, {}, { onprogress: () => {} });
    const token = c.exchanges.items.find((e) => e.body?.method === "tools/call")?.body?.params?._meta?.progressToken;
    expect(token).toBeDefined();
    const worker = await cluster.claimer(created.task.taskId, 30_000);
    const result = await taskResult(c.client, created.task.taskId);
    expect(result.content).toEqual([{ type: "text", text: "Long running operation completed. Duration: 3 seconds, Steps: 3." }]);
    expect(result._meta?.[RELATED_TASK]).toEqual({ taskId: created.task.taskId });
    expect((await getTask(c.client, created.task.taskId)).status).toBe("completed");
    // The upstream's notifications/progress, sent to the worker, reached the requestor with its token.
    const progress = c.messagesOf("notifications/progress").map((m) => m.message.params as Progress & { progressToken: unknown });
    // The last step's progress races the result (after which a task sends none): 1 and 2 always come.
    expect(progress.slice(0, 2)).toEqual([1, 2].map((n) => expect.objectContaining({ progressToken: token, progress: n, total: 3 })));
    // The handler ran on the worker, never on a front (they run none: --workers 0).
    expect(cluster.workers).toContain(worker);
    for (const front of cluster.fronts) expect(claimedBy(front, created.task.taskId)).toBe(false);
    await worker.stderr.waitFor(
      (l) => l["audit"] === "completed" && l["taskId"] === created.task.taskId,
      "the worker to complete the task",
    );
    expect(c.errors).toEqual([]);
  });

  it("puts the upstream's elicitation, asked on the worker, to the requestor on front B; the answer goes back upstream", async () => {
    const balancer = new Balancer(cluster.urls);
    const c = await connect(balancer, { capabilities: { elicitation: { form: {} } } });
    balancer.route = byMethod({ "tools/call": 0, "tasks/result": 1, response: 0, "tasks/get": 0 });
    const asked: unknown[] = [];
    c.client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params._meta?.[RELATED_TASK]);
      return { action: "accept", content: { name: "Ada Lovelace" } };
    });
    const created = await callToolAsTask(c.client, ELICIT, {});
    const result = await taskResult(c.client, created.task.taskId);
    expect(asked).toEqual([{ taskId: created.task.taskId }]);
    expect(JSON.stringify(result.content)).toContain("- Name: Ada Lovelace");
    const question = c.received.filter((r) => r.message.method === "elicitation/create");
    expect(question.map((q) => q.exchange.body?.method)).toEqual(["tasks/result"]);
    expect(c.errors).toEqual([]);
  });

  it("cancels through front B a task running on a worker; the workers' upstreams keep serving", async () => {
    const balancer = new Balancer(cluster.urls);
    const c = await connect(balancer);
    balancer.route = byMethod({ "tools/call": 0, "tasks/cancel": 1, "tasks/get": 1 });
    const created = await callToolAsTask(c.client, LONG, { duration: 60, steps: 60 });
    await cluster.claimer(created.task.taskId, 30_000);
    expect((await cancelTask(c.client, created.task.taskId)).status).toBe("cancelled");
    await expectRpcError(taskResult(c.client, created.task.taskId), -32800, /cancelled/);
    const next = await callToolAsTask(c.client, "echo", { message: "after the cancel" });
    balancer.route = byMethod({ "tasks/result": 1 });
    expect((await taskResult(c.client, next.task.taskId)).content).toEqual([{ type: "text", text: "Echo: after the cancel" }]);
  });

  it("a worker SIGKILLed while its task waits on the upstream's question: the task (recovery fail) fails with a message that says why", async () => {
    const balancer = new Balancer(cluster.urls);
    // No elicitation handler is needed: nobody waits on tasks/result, the question stays queued.
    const c = await connect(balancer);
    balancer.route = byMethod({ "tools/call": 0, "tasks/get": 1 });
    const created = await callToolAsTask(c.client, ELICIT, {});
    const worker = await cluster.claimer(created.task.taskId, 30_000);
    await eventually(
      "the task to wait for input",
      async () => ((await getTask(c.client, created.task.taskId)).status === "input_required" ? true : undefined),
      30_000,
    );
    const killedAt = Date.now();
    await killWorker(worker);
    const failed = await eventually(
      "the task to fail",
      async () => {
        const task = await getTask(c.client, created.task.taskId);
        return task.status === "failed" ? task : undefined;
      },
      30_000,
    );
    expect(failed.statusMessage).toBe(
      'The task\'s worker stopped responding (lease expired); it was not re-run because it was created when its tool declared no recovery ("resume" or "retry")',
    );
    // Noticed once the lease ran out: within a few leases, not at some far timeout.
    expect(Date.now() - killedAt).toBeLessThan(6 * LEASE_MS);
    for (const other of cluster.workers) expect(claimedBy(other, created.task.taskId)).toBe(false);
    await replaceWorker();
  });

  it('a worker SIGKILLed mid-call of a tool with recovery "retry": the other worker calls its upstream again, and the result is the upstream\'s', async () => {
    const balancer = new Balancer(cluster.urls);
    const c = await connect(balancer);
    balancer.route = byMethod({ "tools/call": 0, "tasks/result": 1, "tasks/get": 1 });
    const created = await callToolAsTask(c.client, LONG, { duration: 4, steps: 4 }, {}, { onprogress: () => {} });
    const first = await cluster.claimer(created.task.taskId, 30_000);
    // Killed mid-call: after the upstream reported its first step.
    await c.received.waitFor((r) => r.message.method === "notifications/progress", "the first progress", 30_000);
    await killWorker(first);
    const result = await taskResult(c.client, created.task.taskId);
    expect(result.content).toEqual([{ type: "text", text: "Long running operation completed. Duration: 4 seconds, Steps: 4." }]);
    const [second] = cluster.workers.filter((w) => claimedBy(w, created.task.taskId));
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    const requeued = cluster.fronts.flatMap((f) =>
      f.stderr.filter((l) => l["audit"] === "requeued" && l["taskId"] === created.task.taskId),
    );
    const reapedOnWorker = cluster.workers.flatMap((w) =>
      w.stderr.filter((l) => l["audit"] === "requeued" && l["taskId"] === created.task.taskId),
    );
    expect([...requeued, ...reapedOnWorker]).toHaveLength(1);
    expect((await getTask(c.client, created.task.taskId)).status).toBe("completed");
    await replaceWorker();
  });
});

describe("mcp-tasks worker with a gateway's upstream flags: refused before anything is opened", { timeout: 60_000 }, () => {
  it("refuses both kinds of upstream at once, and a malformed config, naming what is wrong", async () => {
    const store = cluster.store;
    const both = await runCli(["worker", "--store", store, "--upstream-stdio", "x", "--upstream-url", "http://127.0.0.1:1/mcp"]);
    expect(both.code).not.toBe(0);
    expect(both.stderr).toContain("pass exactly one of --upstream-stdio COMMAND and --upstream-url URL");
    const config = await runCli(["worker", "--store", store, "--upstream-stdio", "x", "--config", join(dir, "missing.json")]);
    expect(config.code).not.toBe(0);
    expect(config.stderr).toMatch(/gateway config .*missing\.json: .*ENOENT/);
    const nothing = await runCli(["worker", "--store", store]);
    expect(nothing.code).not.toBe(0);
    expect(nothing.stderr).toContain(
      "nothing to run: pass --demo, --tools MODULE, or a gateway's --upstream-stdio COMMAND / --upstream-url URL",
    );
  });
});
