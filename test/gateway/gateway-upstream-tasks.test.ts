/**
 * An upstream that is itself a task server: our own `mcp-tasks serve --demo` on a
 * SQLite file of its own over HTTP. Its task-capable tools are called task-augmented (T-NEW) and
 * the gateway follows the upstream task (tasks/get, tasks/result: T-GET, T-RES); the upstream
 * task's question reaches the requestor (T-INPUT); a cancel becomes tasks/cancel upstream
 * (T-CANCEL); after kill -9 of the gateway, the restarted gateway re-attaches to the same upstream
 * task instead of failing or calling again.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { CliProcess, killAll } from "../support/cli-process.js";
import { callToolAsTask, cancelTask, expectRpcError, getTask, taskResult } from "../support/conformance.js";
import { connectHttpClient, type HttpClient } from "../support/http-fixture.js";
import { closeClients, EVERYTHING, eventually, nodeCommand, startGateway, type GatewayProcess } from "./gateway-fixture.js";

const dirs: string[] = [];
const direct: HttpClient[] = [];
const stdioGateways: GatewayProcess[] = [];
afterEach(async () => {
  for (const c of direct.splice(0)) await c.close().catch(() => {});
  // server-everything's task store keeps a 5-minute ttl timer, which would keep an orphaned
  // upstream (and the gateway's stderr it holds) alive after the gateway is killed.
  for (const gateway of stdioGateways.splice(0)) for (const pid of gateway.upstreamPids()) process.kill(pid, "SIGKILL");
  await closeClients();
  await killAll();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-gw-uptasks-"));
  dirs.push(dir);
  return dir;
}

interface Setup {
  dir: string;
  upstreamUrl: string;
  server: CliProcess;
  /** An SDK client straight to the upstream, to look at its tasks. */
  upstream: HttpClient;
}

async function upstreamServer(...extra: string[]): Promise<Setup> {
  const dir = tempDir();
  const server = CliProcess.spawn([
    "serve",
    "--demo",
    "--store",
    `sqlite:${join(dir, "upstream.db")}`,
    "--port",
    "0",
    "--no-web",
    ...extra,
  ]);
  const upstreamUrl = await server.url(60_000);
  const upstream = await connectHttpClient(upstreamUrl);
  direct.push(upstream);
  return { dir, upstreamUrl, upstream, server };
}

function gatewayOf(setup: Setup, ...extra: string[]): Promise<GatewayProcess> {
  return startGateway(["--store", `sqlite:${join(setup.dir, "gateway.db")}`, ...extra, "--upstream-url", setup.upstreamUrl]);
}

/** The upstream task id the gateway logged for its task `taskId` ("created" or "re-attached"). */
function upstreamTaskOf(gateway: GatewayProcess, taskId: string, msg = "created an upstream task"): Promise<string> {
  return eventually(
    "the gateway to log its upstream task",
    async () => {
      const line = gateway.cli.stderr.filter((l) => l["msg"] === msg && l["taskId"] === taskId)[0];
      return typeof line?.["upstreamTaskId"] === "string" ? line["upstreamTaskId"] : undefined;
    },
    30_000,
  );
}

describe("gateway in front of a task server (serve --demo over HTTP)", { timeout: 150_000 }, () => {
  it("waits out the upstream's rate limit (-32029 with retryAfterMs) while following its task, instead of failing the task", async () => {
    // One task operation a second upstream: the gateway's polls of tasks/get and its tasks/result are refused now and then (T-SEC-4).
    const setup = await upstreamServer("--rate-limit", "1", "--rate-burst", "1");
    const gateway = await gatewayOf(setup);
    const { client } = await gateway.connect();
    const created = await callToolAsTask(client, "sleep", { ms: 1500 });
    const result = await taskResult(client, created.task.taskId);
    expect(result.content).toEqual([{ type: "text", text: "slept 1500 ms" }]);
    expect((await getTask(client, created.task.taskId)).status).toBe("completed");
    expect(setup.server.stderr.items.some((l) => l["audit"] === "limit_hit")).toBe(true); // it was refused at least once
  });

  it("calls a task-capable tool task-augmented and follows the upstream task to its result", async () => {
    const setup = await upstreamServer();
    const gateway = await gatewayOf(setup);
    const { client } = await gateway.connect();
    const created = await callToolAsTask(client, "sleep", { ms: 1500 });
    const upstreamTaskId = await upstreamTaskOf(gateway, created.task.taskId);
    expect(upstreamTaskId).not.toBe(created.task.taskId);
    const result = await taskResult(client, created.task.taskId);
    expect(result.content).toEqual([{ type: "text", text: "slept 1500 ms" }]);
    // The upstream ran it as its own task, and holds its result.
    expect((await getTask(setup.upstream.client, upstreamTaskId)).status).toBe("completed");
    expect((await taskResult(setup.upstream.client, upstreamTaskId)).content).toEqual([{ type: "text", text: "slept 1500 ms" }]);
  });

  it("serves a required upstream tool to a plain call: the gateway makes it an upstream task and waits", async () => {
    const setup = await upstreamServer();
    const gateway = await gatewayOf(setup);
    const { client } = await gateway.connect();
    const result = await client.callTool({ name: "batch", arguments: { ms: 300 } });
    expect(result.content).toEqual([{ type: "text", text: "slept 300 ms" }]);
  });

  it("relays the upstream task's question to the requestor and its answer back", async () => {
    const setup = await upstreamServer();
    const gateway = await gatewayOf(setup);
    const http = await gateway.connect();
    const asked: string[] = [];
    http.client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: "accept", content: { answer: "forty-two" } };
    });
    const created = await callToolAsTask(http.client, "ask", { question: "What is the answer?" });
    const result = await taskResult(http.client, created.task.taskId);
    expect(result.content).toEqual([{ type: "text", text: "answer: forty-two" }]);
    expect(asked).toEqual(["What is the answer?"]);
  });

  it("cancels the upstream task (tasks/cancel) when the gateway task is cancelled", async () => {
    const setup = await upstreamServer();
    const gateway = await gatewayOf(setup);
    const { client } = await gateway.connect();
    const created = await callToolAsTask(client, "sleep", { ms: 60_000 });
    const upstreamTaskId = await upstreamTaskOf(gateway, created.task.taskId);
    await cancelTask(client, created.task.taskId);
    const upstreamTask = await eventually("the upstream task to be cancelled", async () => {
      const task = await getTask(setup.upstream.client, upstreamTaskId);
      return task.status === "cancelled" ? task : undefined;
    });
    expect(upstreamTask.status).toBe("cancelled");
    expect((await getTask(client, created.task.taskId)).status).toBe("cancelled");
  });

  it("fails the task clearly when the upstream stops answering about its task (SIGSTOP) for --upstream-timeout", async () => {
    const setup = await upstreamServer();
    const gateway = await gatewayOf(setup, "--upstream-timeout", "3000");
    const { client } = await gateway.connect();
    const created = await callToolAsTask(client, "sleep", { ms: 60_000 });
    const upstreamTaskId = await upstreamTaskOf(gateway, created.task.taskId);
    process.kill(setup.server.pid, "SIGSTOP");
    try {
      const failed = await eventually(
        "the task to fail",
        async () => {
          const task = await getTask(client, created.task.taskId);
          return task.status === "failed" ? task : undefined;
        },
        30_000,
      );
      expect(failed.statusMessage).toBe(
        `The upstream server (${new URL(setup.upstreamUrl).origin}/mcp) did not answer about its task ${upstreamTaskId} (tools/call sleep) for 3000 ms; the gateway stopped following it`,
      );
    } finally {
      process.kill(setup.server.pid, "SIGCONT");
    }
  });

  it("re-attaches to the upstream task after kill -9 of the gateway: same upstream task, its result served", async () => {
    const setup = await upstreamServer();
    const first = await gatewayOf(setup);
    const before = await first.connect();
    const created = await callToolAsTask(before.client, "sleep", { ms: 8000 });
    const upstreamTaskId = await upstreamTaskOf(first, created.task.taskId);
    await closeClients();
    await first.cli.kill("SIGKILL");
    expect((await getTask(setup.upstream.client, upstreamTaskId)).status).toBe("working");

    const second = await gatewayOf(setup);
    const after = await second.connect();
    expect(await upstreamTaskOf(second, created.task.taskId, "re-attached to an upstream task")).toBe(upstreamTaskId);
    const result = await taskResult(after.client, created.task.taskId);
    expect(result.content).toEqual([{ type: "text", text: "slept 8000 ms" }]);
    // Nothing was called again upstream: the restarted gateway created no upstream task.
    expect(second.cli.stderr.filter((l) => l["msg"] === "created an upstream task")).toHaveLength(0);
  });
});

describe("gateway in front of server-everything's own tasks (stdio)", { timeout: 120_000 }, () => {
  it("follows simulate-research-query's upstream task, relays its clarification question by related task, and returns its report", async () => {
    const gateway = await startGateway(["--store", "memory", "--upstream-stdio", nodeCommand(EVERYTHING, "stdio")]);
    stdioGateways.push(gateway);
    const http = await gateway.connect();
    const { tools } = await http.client.listTools();
    expect(tools.find((t) => t.name === "simulate-research-query")?.execution?.taskSupport).toBe("optional");
    const asked: string[] = [];
    http.client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      // A first answer outside the question's enum, then one of its choices.
      return { action: "accept", content: { interpretation: asked.length === 1 ? "the programming language" : "programming" } };
    });
    const created = await callToolAsTask(http.client, "simulate-research-query", { topic: "python", ambiguous: true });
    const upstreamTaskId = await upstreamTaskOf(gateway, created.task.taskId);
    expect(upstreamTaskId).toBeTruthy();
    // The relayed question keeps the upstream's form: an answer that does not fit is refused by
    // the gateway (-32602 naming the field) and the question stays open for the next tasks/result.
    await expectRpcError(
      taskResult(http.client, created.task.taskId),
      -32602,
      /Invalid field "interpretation": expected one of "programming", "snake", "comedy"/,
    );
    const result = await taskResult(http.client, created.task.taskId);
    expect(asked).toHaveLength(2);
    expect(asked[0]).toContain('"python" could have multiple interpretations');
    expect(JSON.stringify(result.content)).toContain("programming");
    expect((await getTask(http.client, created.task.taskId)).status).toBe("completed");
  });
});
