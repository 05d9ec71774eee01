/**
 * A pause across a real cluster: two `serve --workers 0` fronts with the web view and one `worker`
 * on a fresh PostgreSQL schema. A tool paused through one front is paused for the whole cluster:
 * the other front lists it paused and queues its new tasks saying so, the worker claims none of
 * them (other tools' tasks go on, and a task of the tool already running finishes), both fronts'
 * /metrics show it, and a front started afterwards finds it paused; resumed through the other
 * front, the queued task runs at once.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cluster } from "../support/cluster.js";
import { callToolAsTask, getTask } from "../support/conformance.js";
import { webApi } from "../support/web-client.js";

const ADMIN_TOKEN = "admin-token-for-the-pause-cluster";

let cluster: Cluster;
let fronts: URL[];
let clients: Client[];

beforeAll(async () => {
  cluster = await Cluster.start({ fronts: 2, workers: 1, concurrency: 4, web: true, frontArgs: ["--admin-token", ADMIN_TOKEN] });
  fronts = cluster.urls.map((url) => new URL(url));
  clients = [];
  for (const front of fronts) {
    const client = new Client({ name: "pause-cluster-test", version: "0.0.0" });
    await client.connect(new StreamableHTTPClientTransport(front));
    clients.push(client);
  }
}, 90_000);

afterAll(async () => {
  for (const client of clients ?? []) await client.close().catch(() => {});
  await cluster?.stop();
});

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const pausedOn = async (front: URL, tool: string): Promise<boolean> => {
  const answer = await webApi(front, "/tasks/api/queues", ADMIN_TOKEN);
  return (answer.json["tools"] as Array<{ name: string; paused: boolean }>).some((t) => t.name === tool && t.paused);
};

describe("a tool paused on one front is paused for the whole cluster", { timeout: 90_000 }, () => {
  it("queues its tasks on the other front, the worker starts none of them while other work goes on, and a resume starts them", async () => {
    const [a, b] = fronts as [URL, URL];
    const [onA, onB] = clients as [Client, Client];
    // Running before the pause: it goes on.
    const running = (await callToolAsTask(onA, "batch", { ms: 1500 })).task;
    await cluster.claimer(running.taskId);

    const paused = await webApi(a, "/tasks/api/queues/batch/pause", ADMIN_TOKEN, { method: "POST" });
    expect(paused.status).toBe(200);
    // The other front hears of it through the cluster's bus (a `wake` that re-reads the store).
    await until(() => pausedOn(b, "batch"), Boolean, "front B to list batch as paused");

    const queued = (await callToolAsTask(onB, "batch", { ms: 10 })).task;
    expect(queued.status).toBe("working");
    expect(queued.statusMessage).toBe("queued: the tool batch is paused; it starts once an operator resumes the tool");
    // Other tools go on; the task that was running finishes.
    const other = (await callToolAsTask(onB, "sleep", { ms: 10 })).task;
    await until(
      () => getTask(onB, other.taskId),
      (t) => t.status === "completed",
      "the sleep task to complete",
    );
    await until(
      () => getTask(onA, running.taskId),
      (t) => t.status === "completed",
      "the running batch task to finish",
    );

    // Well past a claim: still queued, and no worker claimed it.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const still = await getTask(onA, queued.taskId);
    expect(still.status).toBe("working");
    expect(still.statusMessage).toMatch(/the tool batch is paused/);
    const claimed = cluster.workers.some((w) => w.stderr.items.some((l) => l["msg"] === "claimed task" && l["taskId"] === queued.taskId));
    expect(claimed).toBe(false);
    for (const front of fronts) {
      const metrics = await (await fetch(new URL("/metrics", front))).text();
      expect(metrics).toMatch(/^mcp_tasks_tool_paused\{tool="batch"\} 1$/m);
      expect(metrics).toMatch(/^mcp_tasks_tool_paused\{tool="sleep"\} 0$/m);
    }

    // A node started now (a restart, a deploy) reads the pause from PostgreSQL as it starts.
    await cluster.startFront();
    const late = new URL(cluster.urls[2] as string);
    expect(await pausedOn(late, "batch")).toBe(true);

    const resumed = await webApi(b, "/tasks/api/queues/batch/resume", ADMIN_TOKEN, { method: "POST" });
    expect(resumed.json).toEqual({ tool: "batch", paused: false, changed: true });
    await cluster.claimer(queued.taskId);
    await until(
      () => getTask(onA, queued.taskId),
      (t) => t.status === "completed",
      "the queued batch task to run once resumed",
    );
    await until(async () => !(await pausedOn(a, "batch")), Boolean, "front A to list batch as running again");
  });

  it("a token the server does not know is refused (401) and an unknown tool is named (404), on every front", async () => {
    for (const front of fronts) {
      expect((await webApi(front, "/tasks/api/queues/batch/pause", "not-a-token", { method: "POST" })).status).toBe(401);
      const unknown = await webApi(front, "/tasks/api/queues/nope/pause", ADMIN_TOKEN, { method: "POST" });
      expect(unknown.status).toBe(404);
      expect(unknown.json.error?.message).toContain('"nope"');
    }
  });
});
