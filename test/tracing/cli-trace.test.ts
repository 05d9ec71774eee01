/**
 * `mcp-tasks call` as a traced requestor, against a traced `mcp-tasks serve` (real processes, a
 * real OTLP/HTTP collector): with OTEL_EXPORTER_OTLP_ENDPOINT set, its CLIENT span and the
 * server's spans of the call share one trace id; with `--traceparent` alone (no SDK in the CLI)
 * the server's span is a child of the given parent. Both eras, from one table.
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, killAll, runCli } from "../support/cli-process.js";
import { OtlpReceiver } from "../support/otlp/otlp-receiver.js";
import { SPAN_KIND, type ReceivedSpan } from "../support/otlp/received.js";

let receiver: OtlpReceiver;
let url: string;
let state: string;
const SERVER = "cli-trace-server";

beforeAll(async () => {
  receiver = await OtlpReceiver.start();
  const server = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0", "--inline-wait-ms", "0"], {
    env: receiver.env("http/protobuf", SERVER),
  });
  url = await server.url();
  state = mkdtempSync(join(tmpdir(), "mcp-tasks-cli-trace-"));
}, 30_000);

afterAll(async () => {
  await killAll();
  await receiver?.close();
  rmSync(state, { recursive: true, force: true });
});

const ERAS = [
  { era: "2025-11-25", protocol: "2025-11-25" },
  { era: "2026-07-28", protocol: "auto" },
];

const ofServer = (span: ReceivedSpan): boolean => span.resource["service.name"] === SERVER;

describe.each(ERAS)("mcp-tasks call under $era", { timeout: 60_000 }, ({ era, protocol }) => {
  it("with OTEL_EXPORTER_OTLP_ENDPOINT: the CLI's tools/call CLIENT span and the server's spans of the task share one trace id", async () => {
    const client = `cli-trace-${era}`;
    const run = await runCli(["call", url, "steps", '{"count":2,"ms":10}', "--task", "--json"], {
      env: { ...receiver.env("http/json", client), MCP_TASKS_STATE_DIR: state, MCP_TASKS_PROTOCOL: protocol },
      timeoutMs: 45_000,
    });
    expect(run.code, run.stderr).toBe(0);
    const outbound = await receiver.span(
      (s) => s.resource["service.name"] === client && s.name === "tools/call steps",
      "the CLI's client span",
    );
    expect(outbound.kind).toBe(SPAN_KIND.client);
    expect(outbound.attributes).toMatchObject({ "mcp.method.name": "tools/call", "gen_ai.tool.name": "steps" });
    const served = await receiver.span(
      (s) => ofServer(s) && s.name === "tools/call steps" && s.traceId === outbound.traceId,
      "the server's tools/call span in the CLI's trace",
    );
    expect(served.parentSpanId).toBe(outbound.spanId);
    const execution = await receiver.span(
      (s) => ofServer(s) && s.name === "execute_tool steps" && s.traceId === outbound.traceId,
      "the execution span in the CLI's trace",
    );
    expect(execution.parentSpanId).toBe(served.spanId);
    expect(execution.events.filter((e) => e.name === "mcp.task.step.stored").map((e) => e.attributes["mcp.task.step"])).toEqual([
      "step 1",
      "step 2",
    ]);
  });

  it("a plain call answered with an isError result: the CLI's CLIENT span fails as tool_error, as the server's does", async () => {
    const client = `cli-trace-fail-${era}`;
    const run = await runCli(["call", url, "fail", '{"message":"no luck"}', "--no-task", "--json"], {
      env: { ...receiver.env("http/json", client), MCP_TASKS_STATE_DIR: state, MCP_TASKS_PROTOCOL: protocol },
      timeoutMs: 45_000,
    });
    expect(run.stdout).toMatch(/no luck/);
    const outbound = await receiver.span(
      (s) => s.resource["service.name"] === client && s.name === "tools/call fail",
      "the CLI's client span",
    );
    expect(outbound.kind).toBe(SPAN_KIND.client);
    expect(outbound.attributes["error.type"]).toBe("tool_error");
    expect(outbound.statusCode).toBe(2);
    const served = await receiver.span(
      (s) => ofServer(s) && s.name === "tools/call fail" && s.traceId === outbound.traceId,
      "the server's tools/call span",
    );
    expect(served.attributes["error.type"]).toBe("tool_error");
  });

  it("with a collector that never answers: the call prints its result and exits within the 1 s export wait, whatever the exporter's own timeout", async () => {
    const hanging = createServer(() => {});
    await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve));
    const port = (hanging.address() as AddressInfo).port;
    try {
      const started = performance.now();
      const run = await runCli(["call", url, "echo", '{"text":"through"}', "--json"], {
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
          OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
          OTEL_EXPORTER_OTLP_TIMEOUT: "30000",
          MCP_TASKS_STATE_DIR: state,
          MCP_TASKS_PROTOCOL: protocol,
        },
        timeoutMs: 45_000,
      });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain("through");
      expect(performance.now() - started).toBeLessThan(15_000);
    } finally {
      hanging.closeAllConnections();
      hanging.close();
    }
  });

  it("with --traceparent and no SDK in the CLI: the server's tools/call span is a child of the given parent", async () => {
    const traceId = randomBytes(16).toString("hex");
    const parentId = randomBytes(8).toString("hex");
    const run = await runCli(
      ["call", url, "steps", '{"count":1,"ms":10}', "--task", "--json", "--traceparent", `00-${traceId}-${parentId}-01`],
      {
        env: { MCP_TASKS_STATE_DIR: state, MCP_TASKS_PROTOCOL: protocol },
        timeoutMs: 45_000,
      },
    );
    expect(run.code, run.stderr).toBe(0);
    const served = await receiver.span(
      (s) => ofServer(s) && s.name === "tools/call steps" && s.traceId === traceId,
      "the server's span under the given trace",
    );
    expect(served.parentSpanId).toBe(parentId);
  });

  it("refuses a malformed --traceparent as a usage error (exit 2)", async () => {
    const run = await runCli(["call", url, "steps", '{"count":1,"ms":10}', "--traceparent", "not-a-traceparent"], {
      env: { MCP_TASKS_STATE_DIR: state, MCP_TASKS_PROTOCOL: protocol },
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("expected a W3C traceparent");
  });
});
