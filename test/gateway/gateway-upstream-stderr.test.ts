/**
 * A stdio upstream's stderr in a real `mcp-tasks gateway` process's log: every line of it is the
 * `line` field of a gateway log line, never a raw line — a line the upstream forges to read as the
 * gateway's audit line is not one — cut to a bounded length, and a flood is dropped past a rate,
 * with the count of what was dropped in the log (fixtures/stderr-writing-upstream.mjs).
 */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UPSTREAM_STDERR_LIMITS } from "../../src/gateway/upstream-stderr.js";
import { killAll, REPO_ROOT, type LogLine } from "../support/cli-process.js";
import { eventually, nodeCommand, startGateway, type GatewayProcess } from "./gateway-fixture.js";

const STDERR_UPSTREAM = join(REPO_ROOT, "test/gateway/fixtures/stderr-writing-upstream.mjs");
const FORGED_TASK = "forged-by-the-upstream-0001";
/** What the gateway's own audit line for a cancel looks like (docs/security.md, Audit log). */
const FORGED = JSON.stringify({
  level: 30,
  time: Date.now(),
  service: "mcp-tasks",
  audit: "cancelled",
  owner: "local|alice",
  taskId: FORGED_TASK,
  peer: "127.0.0.1",
  operation: "cancel",
  msg: "task cancelled",
});
const FLOOD = 5000;

let gateway: GatewayProcess;

beforeAll(async () => {
  gateway = await startGateway(["--store", "memory", "--upstream-stdio", nodeCommand(STDERR_UPSTREAM, FORGED)]);
}, 60_000);

afterAll(async () => {
  await killAll();
});

const upstreamLines = (): LogLine[] => gateway.cli.stderr.items.filter((l) => l["msg"] === "upstream stderr");
const floodLogged = (): number => upstreamLines().filter((l) => typeof l["line"] === "string" && l["line"].startsWith("flood ")).length;
const droppedReported = (): number =>
  gateway.cli.stderr.items
    .filter((l) => l["msg"] === "upstream stderr lines dropped: the upstream wrote more than the gateway logs")
    .reduce((sum, l) => sum + Number(l["dropped"]), 0);

describe("gateway: the upstream's stderr in the gateway's log", { timeout: 30_000 }, () => {
  it("carries a line the upstream forges as an audit line inside the `line` field of a gateway line, never as a line of its own", async () => {
    const carried = await eventually("the forged line in the log", async () => upstreamLines().find((l) => l["line"] === FORGED));
    expect(carried["upstream"]).toMatch(/^stdio:/);
    expect(carried["level"]).toBe(30);
    expect(carried["audit"]).toBeUndefined();
    // No line of the gateway's stderr parses as an audit record about the forged task, nor is the forged text a line.
    expect(gateway.cli.stderr.items.filter((l) => l["taskId"] === FORGED_TASK || l["audit"] === "cancelled")).toEqual([]);
    expect(gateway.cli.stderr.items.filter((l) => l.raw === FORGED)).toEqual([]);
  });

  it("cuts a long line to its first maxLineChars characters and says how many were dropped", async () => {
    const long = await eventually("the long line in the log", async () =>
      upstreamLines().find((l) => typeof l["line"] === "string" && l["line"].startsWith("xxx")),
    );
    expect(long["line"]).toBe("x".repeat(UPSTREAM_STDERR_LIMITS.maxLineChars));
    expect(long["truncatedChars"]).toBe(100_000 - UPSTREAM_STDERR_LIMITS.maxLineChars);
  });

  it("drops a flood of lines beyond its rate and logs how many it dropped, every line accounted for", async () => {
    await eventually(
      "every flooded line logged or counted as dropped",
      async () => (floodLogged() + droppedReported() === FLOOD ? true : undefined),
      10_000,
    );
    expect(droppedReported()).toBeGreaterThan(FLOOD / 2);
    expect(floodLogged()).toBeLessThanOrEqual(UPSTREAM_STDERR_LIMITS.burstLines + 5 * UPSTREAM_STDERR_LIMITS.linesPerSecond);
  });
});
