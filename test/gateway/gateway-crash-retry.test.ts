/**
 * Retry on upstream crash: kill -9 of the real server-everything mid-call. A tool
 * configured with recovery "retry" has its call re-sent to the restarted upstream (bounded by
 * `retries`); one without fails (gateway-everything.test.ts); a blanket `defaults` recovery never
 * re-sends a tool the upstream does not declare safe to repeat.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { crashRetries } from "../../src/gateway/crash-retry.js";
import { GatewayConfig, GatewayConfigFile, DEFAULT_CRASH_RETRIES } from "../../src/gateway/gateway-config.js";
import { killAll } from "../support/cli-process.js";
import { callToolAsTask, getTask, taskResult } from "../support/conformance.js";
import { closeClients, EVERYTHING, eventually, nodeCommand, startGateway, type GatewayProcess } from "./gateway-fixture.js";

const dirs: string[] = [];
afterEach(async () => {
  await closeClients();
  await killAll();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function configFile(config: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-gw-retry-"));
  dirs.push(dir);
  const file = join(dir, "gateway.json");
  writeFileSync(file, JSON.stringify(config));
  return file;
}

const LONG = "trigger-long-running-operation";

function gatewayWith(config: unknown): Promise<GatewayProcess> {
  return startGateway(["--store", "memory", "--config", configFile(config), "--upstream-stdio", nodeCommand(EVERYTHING, "stdio")]);
}

/** Kills the gateway's (only) upstream with SIGKILL once it runs; returns its pid. */
async function killUpstream(gateway: GatewayProcess, not: number[] = []): Promise<number> {
  const pid = await eventually("a running upstream", async () => gateway.upstreamPids().find((p) => !not.includes(p)));
  process.kill(pid, "SIGKILL");
  return pid;
}

/** Waits until the gateway has re-sent its call `n` times (its log says so, and the new upstream is connected). */
async function resent(gateway: GatewayProcess, n: number): Promise<void> {
  await eventually(`re-send ${n}`, async () =>
    gateway.cli.stderr.filter((l) => l["msg"] === "upstream lost during a call; re-sending it once restarted").length >= n
      ? true
      : undefined,
  );
  await eventually(`the restart before re-send ${n}`, async () =>
    gateway.cli.stderr.filter((l) => l["msg"] === "connected to the upstream server").length >= n + 1 ? true : undefined,
  );
}

describe("gateway: a call re-sent after its upstream crashed", { timeout: 120_000 }, () => {
  it("re-sends a recovery-retry tool's call to the restarted upstream, and the task completes with its result", async () => {
    const gateway = await gatewayWith({ tools: { [LONG]: { recovery: "retry", retries: 1 } } });
    const { client } = await gateway.connect();
    const created = await callToolAsTask(client, LONG, { duration: 4, steps: 4 });
    await eventually("the task to run", async () => ((await getTask(client, created.task.taskId)).status === "working" ? true : undefined));
    const killed = await killUpstream(gateway);
    await resent(gateway, 1);
    const task = await getTask(client, created.task.taskId);
    expect(task.status).toBe("working");
    expect(task.statusMessage).toMatch(/exited or crashed during the call; re-sending it once restarted \(retry 1 of 1\)/);
    const result = await taskResult(client, created.task.taskId);
    expect(result.content).toEqual([{ type: "text", text: "Long running operation completed. Duration: 4 seconds, Steps: 4." }]);
    expect((await getTask(client, created.task.taskId)).status).toBe("completed");
    expect(gateway.upstreamPids()).not.toContain(killed);
  });

  it("gives up after `retries` re-sends: a second crash fails the task and says it was re-sent", async () => {
    const gateway = await gatewayWith({ tools: { [LONG]: { recovery: "retry", retries: 1 } } });
    const { client } = await gateway.connect();
    const created = await callToolAsTask(client, LONG, { duration: 60, steps: 60 });
    await eventually("the task to run", async () => ((await getTask(client, created.task.taskId)).status === "working" ? true : undefined));
    const first = await killUpstream(gateway);
    await resent(gateway, 1);
    await killUpstream(gateway, [first]);
    const failed = await eventually("the task to fail", async () => {
      const task = await getTask(client, created.task.taskId);
      return task.status === "failed" ? task : undefined;
    });
    expect(failed.statusMessage).toMatch(
      /closed the connection during tools\/call trigger-long-running-operation \(it exited or crashed, also after 1 re-send\)/,
    );
  });
});

describe("which calls are re-sent after a crash", () => {
  const safe = { name: "echo", annotations: { readOnlyHint: true, idempotentHint: true } };
  const unsafe = { name: "charge", annotations: { readOnlyHint: false, idempotentHint: false } };
  const unannotated = { name: "mystery" };

  it("none without a retry recovery", () => {
    expect(crashRetries(new GatewayConfig(), safe)).toBe(0);
    expect(crashRetries(new GatewayConfig({ tools: { echo: { recovery: "fail" } } }), safe)).toBe(0);
  });

  it("a defaults recovery re-sends only tools the upstream declares idempotent or read-only", () => {
    const config = new GatewayConfig({ defaults: { recovery: "retry" } });
    expect(crashRetries(config, safe)).toBe(DEFAULT_CRASH_RETRIES);
    expect(crashRetries(config, unsafe)).toBe(0);
    expect(crashRetries(config, unannotated)).toBe(0);
  });

  it("a tool's own entry is the operator's word, whatever its annotations", () => {
    const config = new GatewayConfig({ defaults: { retries: 3 }, tools: { charge: { recovery: "retry" } } });
    expect(crashRetries(config, unsafe)).toBe(3);
  });

  it("refuses more than 5 retries in the config file", () => {
    expect(GatewayConfigFile.safeParse({ tools: { echo: { retries: 6 } } }).success).toBe(false);
    expect(GatewayConfigFile.safeParse({ tools: { echo: { retries: 5 } } }).success).toBe(true);
  });
});
