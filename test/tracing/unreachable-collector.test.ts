/**
 * An OTLP collector that cannot be reached (nothing listens at OTEL_EXPORTER_OTLP_ENDPOINT), with
 * real CLI processes: a one-shot command exits about a second after its output instead of waiting
 * out the exporter's retries, and says once on stderr that its telemetry was dropped; a server
 * logs one warning line however many exports fail.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, killAll, runCli } from "../support/cli-process.js";
import { freePort } from "../support/free-port.js";

let state: string;
let unreachable: Record<string, string>;

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), "mcp-tasks-unreachable-otlp-"));
  unreachable = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await freePort()}`, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" };
});

afterAll(async () => {
  await killAll();
  rmSync(state, { recursive: true, force: true });
});

const warnings = (stderr: string): string[] => stderr.split("\n").filter((line) => line.includes("telemetry could not be exported"));

describe("an unreachable OTLP collector", { timeout: 60_000 }, () => {
  it("a one-shot command exits within about a second of printing its result, with one line saying its telemetry was dropped", async () => {
    const server = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0"]);
    const url = await server.url();
    const call = CliProcess.spawn(["call", url, "echo", '{"text":"through"}'], { env: { ...unreachable, MCP_TASKS_STATE_DIR: state } });
    await call.stdoutLines.waitFor((line) => line === "through", "the result", 30_000);
    const printed = performance.now();
    const exit = await call.exited;
    expect(exit.code, call.stderrText).toBe(0);
    // The wait at exit is 1 s; the exporter's own retries would hold the process for 5 s and more.
    expect(performance.now() - printed).toBeLessThan(3_500);
    expect(warnings(call.stderrText)).toEqual([
      `mcp-tasks: telemetry could not be exported to ${unreachable["OTEL_EXPORTER_OTLP_ENDPOINT"]}: the collector did not take the spans within 1000 ms; it was dropped`,
    ]);
  });

  it("a server logs one warning line naming the collector, not one per failed export", async () => {
    const server = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0"], {
      env: { ...unreachable, OTEL_BSP_SCHEDULE_DELAY: "50", OTEL_EXPORTER_OTLP_TIMEOUT: "300" },
    });
    const url = await server.url();
    const call = () => runCli(["call", url, "echo", '{"text":"x"}'], { env: { MCP_TASKS_STATE_DIR: state } });
    expect((await call()).code).toBe(0);
    const first = await server.stderr.waitFor(
      (line) => typeof line["msg"] === "string" && line["msg"].includes("telemetry could not be exported"),
      "the export warning",
      20_000,
    );
    expect(first).toMatchObject({
      level: 40,
      endpoint: unreachable["OTEL_EXPORTER_OTLP_ENDPOINT"],
      msg: expect.stringContaining("later export failures are not logged"),
    });
    // More spans, more failed exports (each batch is retried within 300 ms, then dropped).
    for (let i = 0; i < 3; i++) expect((await call()).code).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(warnings(server.stderrText)).toHaveLength(1);
  });
});
