/**
 * `--upstream-per-principal`: two bearer principals, alice and mallory, in front
 * of a real server-everything over stdio. Each gets a process of their own (distinct pids), their
 * elicitations asked at the same time each reach their owner only (T-SEC-1, T-INPUT), a process
 * without calls is ended after --upstream-idle, and at --upstream-max-processes a busy pool refuses
 * rather than share a process.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { killAll, runCli } from "../support/cli-process.js";
import { callToolAsTask, getTask, taskResult } from "../support/conformance.js";
import type { HttpClient } from "../support/http-fixture.js";
import { closeClients, EVERYTHING, eventually, nodeCommand, startGateway, type GatewayProcess } from "./gateway-fixture.js";

const ALICE = "tok-alice-gw-4c1d";
const MALLORY = "tok-mallory-gw-9e2a";
const dirs: string[] = [];
const gateways: GatewayProcess[] = [];

afterEach(async () => {
  // An upstream still busy (a 30 s operation) outlives a SIGKILLed gateway for a while, holding
  // the gateway's stderr open, which killAll waits for: the upstreams go first.
  for (const gateway of gateways.splice(0)) for (const pid of gateway.upstreamPids()) process.kill(pid, "SIGKILL");
  await closeClients();
  await killAll();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tokenFile(): string {
  const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-gw-principals-"));
  dirs.push(dir);
  const file = join(dir, "tokens.json");
  writeFileSync(file, JSON.stringify({ [ALICE]: "alice", [MALLORY]: "mallory" }));
  return file;
}

async function gatewayWith(args: string[]): Promise<GatewayProcess> {
  const gateway = await startGateway([
    "--store",
    "memory",
    "--auth-tokens",
    tokenFile(),
    ...args,
    "--upstream-stdio",
    nodeCommand(EVERYTHING, "stdio"),
  ]);
  gateways.push(gateway);
  return gateway;
}

function perPrincipalGateway(...extra: string[]): Promise<GatewayProcess> {
  return gatewayWith(["--upstream-per-principal", ...extra]);
}

/** Answers the elicitation with `name` once `release` resolves; records each question's message. */
function answerWith(http: HttpClient, name: string, asked: string[], release: Promise<void>): void {
  http.client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params.message);
    await release;
    return { action: "accept", content: { name } };
  });
}

describe("gateway --upstream-per-principal (server-everything over stdio)", { timeout: 120_000 }, () => {
  it("runs each principal's calls in a process of its own: two elicitations at once, each answered by its owner", async () => {
    const gateway = await perPrincipalGateway();
    // The gateway's own process lists the tools and serves resources and prompts.
    expect(gateway.upstreamPids()).toHaveLength(1);
    const alice = await gateway.connect({ token: ALICE });
    const mallory = await gateway.connect({ token: MALLORY });
    const askedAlice: string[] = [];
    const askedMallory: string[] = [];
    let releaseBoth!: () => void;
    const both = new Promise<void>((resolve) => (releaseBoth = resolve));
    answerWith(alice, "Alice Liddell", askedAlice, both);
    answerWith(mallory, "Mallory Mallard", askedMallory, both);

    const a = await callToolAsTask(alice.client, "trigger-elicitation-request", {});
    const m = await callToolAsTask(mallory.client, "trigger-elicitation-request", {});
    // The questions travel on each requestor's tasks/result stream (T-INPUT-3).
    const aliceDone = taskResult(alice.client, a.task.taskId);
    const malloryDone = taskResult(mallory.client, m.task.taskId);
    // Both questions are out before either is answered: on one shared process the second would be
    // refused (two calls in flight, no telling whose asks).
    await eventually(
      "both questions to be asked",
      async () => (askedAlice.length === 1 && askedMallory.length === 1 ? true : undefined),
      60_000,
    );
    const pids = gateway.upstreamPids();
    expect(pids).toHaveLength(3);
    expect(new Set(pids).size).toBe(3);
    expect((await getTask(alice.client, a.task.taskId)).status).toBe("input_required");
    releaseBoth();

    const aliceResult = JSON.stringify((await aliceDone).content);
    const malloryResult = JSON.stringify((await malloryDone).content);
    expect(aliceResult).toContain("Alice Liddell");
    expect(aliceResult).not.toContain("Mallory");
    expect(malloryResult).toContain("Mallory Mallard");
    expect(malloryResult).not.toContain("Alice");
    expect(askedAlice).toHaveLength(1);
    expect(askedMallory).toHaveLength(1);
    // A second call of alice's goes to her process again: no new one.
    await alice.client.callTool({ name: "echo", arguments: { message: "again" } });
    expect(gateway.upstreamPids().sort()).toEqual(pids.sort());
    const started = gateway.cli.stderr.filter((l) => l["msg"] === "started an upstream process for a principal").map((l) => l["principal"]);
    expect(started.sort()).toEqual(["owner:local|alice", "owner:local|mallory"]);
  });

  it("without the flag (shared mode), the second principal's question is refused while the first's call is in flight", async () => {
    const gateway = await gatewayWith([]);
    const alice = await gateway.connect({ token: ALICE });
    const mallory = await gateway.connect({ token: MALLORY });
    const askedAlice: string[] = [];
    const askedMallory: string[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    answerWith(alice, "Alice Liddell", askedAlice, released);
    answerWith(mallory, "Mallory Mallard", askedMallory, Promise.resolve());
    const a = await callToolAsTask(alice.client, "trigger-elicitation-request", {});
    const aliceDone = taskResult(alice.client, a.task.taskId);
    await eventually("alice's question", async () => (askedAlice.length === 1 ? true : undefined), 60_000);
    const m = await callToolAsTask(mallory.client, "trigger-elicitation-request", {});
    const malloryDone = taskResult(mallory.client, m.task.taskId).catch((error: unknown) => error);
    const failed = await eventually("mallory's task to fail", async () => {
      const task = await getTask(mallory.client, m.task.taskId);
      return task.status === "failed" ? task : undefined;
    });
    release();
    await aliceDone;
    await malloryDone;
    expect(askedMallory).toEqual([]);
    expect(failed.statusMessage).toMatch(/elicitation\/create: the gateway has 2 calls in flight and cannot tell which one asks/);
    expect(gateway.upstreamPids()).toHaveLength(1);
  });

  it("ends a principal's process after --upstream-idle without calls, and starts a fresh one on the next call", async () => {
    // Long enough for the checks right after a call on a loaded machine, short for the test.
    const gateway = await perPrincipalGateway("--upstream-idle", "4000");
    const alice = await gateway.connect({ token: ALICE });
    const [shared] = gateway.upstreamPids();
    await alice.client.callTool({ name: "echo", arguments: { message: "one" } });
    const first = gateway.upstreamPids().filter((pid) => pid !== shared);
    expect(first).toHaveLength(1);
    await eventually("the idle process to end", async () => (gateway.upstreamPids().length === 1 ? true : undefined));
    expect(gateway.upstreamPids()).toEqual([shared]);
    // The line is written before the process is ended, but reaches this process through a pipe.
    const endedIdle = () => gateway.cli.stderr.filter((l) => l["msg"] === "ended a principal's upstream process" && l["why"] === "idle");
    await eventually("the gateway to say why it ended the process", async () => (endedIdle().length > 0 ? true : undefined));
    expect(endedIdle()).toHaveLength(1);
    const echo = await alice.client.callTool({ name: "echo", arguments: { message: "two" } });
    expect(echo.content).toEqual([{ type: "text", text: "Echo: two" }]);
    const second = gateway.upstreamPids().filter((pid) => pid !== shared);
    expect(second).toHaveLength(1);
    expect(second).not.toEqual(first);
  });

  it("at --upstream-max-processes with every process busy, fails the other principal's call clearly instead of sharing", async () => {
    const gateway = await perPrincipalGateway("--upstream-max-processes", "1");
    const alice = await gateway.connect({ token: ALICE });
    const mallory = await gateway.connect({ token: MALLORY });
    const busy = await callToolAsTask(alice.client, "trigger-long-running-operation", { duration: 30, steps: 30 });
    await eventually("alice's task to run", async () =>
      (await getTask(alice.client, busy.task.taskId)).status === "working" ? true : undefined,
    );
    const refused = await callToolAsTask(mallory.client, "echo", { message: "me too" });
    const failed = await eventually("mallory's task to fail", async () => {
      const task = await getTask(mallory.client, refused.task.taskId);
      return task.status === "failed" ? task : undefined;
    });
    expect(failed.statusMessage).toMatch(/maximum of 1 upstream processes \(one per principal\) and every one is busy/);
    expect(gateway.upstreamPids()).toHaveLength(2);
  });

  it("refuses --upstream-per-principal with an --upstream-url", async () => {
    const refused = await runCli([
      "gateway",
      "--store",
      "memory",
      "--port",
      "0",
      "--upstream-per-principal",
      "--upstream-url",
      "http://127.0.0.1:9/mcp",
    ]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/one upstream process per principal needs --upstream-stdio/);
  });
});
