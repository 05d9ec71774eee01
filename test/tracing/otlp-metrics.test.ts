/**
 * The metrics over OTLP, with real processes: `mcp-tasks serve` on a SQLite store with
 * OTEL_METRICS_EXPORTER=otlp (JSON, traces off) exports, through the SDK's own periodic reader and
 * OTLP exporter, `mcp.server.operation.duration` and the task metrics (`mcp.tasks.*`, the gauges
 * read from the store included) to a collector that decodes them. One `sleep` task is created, run to completion and its result
 * fetched; each test waits for the data points that task produces.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, killAll } from "../support/cli-process.js";
import { OtlpReceiver } from "../support/otlp/otlp-receiver.js";
import type { ReceivedMetricPoint } from "../support/otlp/received.js";

const SERVICE = "otlp-metrics-server";
let receiver: OtlpReceiver;
let dir: string;

beforeAll(async () => {
  receiver = await OtlpReceiver.start();
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-otlp-metrics-"));
  const server = CliProcess.spawn(
    ["serve", "--demo", "--store", `sqlite:${join(dir, "tasks.db")}`, "--port", "0", "--inline-wait-ms", "0"],
    {
      env: {
        OTEL_METRICS_EXPORTER: "otlp",
        OTEL_TRACES_EXPORTER: "none",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_SERVICE_NAME: SERVICE,
        // The SDK's periodic reader reads it (default 60 s): the points arrive within the test's wait.
        OTEL_METRIC_EXPORT_INTERVAL: "300",
      },
    },
  );
  const url = new URL(await server.url());
  const client = new Client({ name: "otlp-metrics-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(url));
  try {
    const created = await client.request(
      { method: "tools/call", params: { name: "sleep", arguments: { ms: 300 }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    // tasks/result waits for the task to finish (300 ms), then delivers its result: the first fetch.
    const result = await client.request({ method: "tasks/result", params: { taskId: created.task.taskId } }, CallToolResultSchema);
    expect(result.isError).not.toBe(true);
  } finally {
    await client.close();
  }
}, 60_000);

afterAll(async () => {
  await killAll();
  await receiver?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Waits for a data point of `name` from the server whose attributes include `attributes`. */
function point(
  name: string,
  attributes: Record<string, string>,
  enough: (p: ReceivedMetricPoint) => boolean,
): Promise<ReceivedMetricPoint> {
  const what = `${name} ${JSON.stringify(attributes)}`;
  return receiver.metricPoint(
    (p) =>
      p.name === name &&
      p.resource["service.name"] === SERVICE &&
      Object.entries(attributes).every(([key, value]) => p.attributes[key] === value) &&
      enough(p),
    what,
  );
}

const counted = (p: ReceivedMetricPoint): boolean => (p.value ?? 0) >= 1;
const observed = (p: ReceivedMetricPoint): boolean => (p.count ?? 0) >= 1;

describe("metrics over OTLP/JSON from mcp-tasks serve", { timeout: 30_000 }, () => {
  it("exports mcp.server.operation.duration for the tools/call, with the tool's name", async () => {
    const found = await point("mcp.server.operation.duration", { "mcp.method.name": "tools/call", "gen_ai.tool.name": "sleep" }, observed);
    expect(found).toMatchObject({ kind: "histogram", unit: "s", scope: "mcp-tasks" });
  });

  it("counts the task in mcp.tasks.created by tool", async () => {
    const found = await point("mcp.tasks.created", { tool: "sleep" }, counted);
    expect(found.kind).toBe("sum");
  });

  it("counts the task in mcp.tasks.finished by tool and status", async () => {
    const found = await point("mcp.tasks.finished", { tool: "sleep", status: "completed" }, counted);
    expect(found.kind).toBe("sum");
  });

  it("observes the task's duration in mcp.tasks.duration by tool and status, in seconds", async () => {
    const found = await point("mcp.tasks.duration", { tool: "sleep", status: "completed" }, observed);
    expect(found).toMatchObject({ kind: "histogram", unit: "s" });
    // The handler sleeps 10 ms, so the task lasted at least that.
    expect(found.sum).toBeGreaterThanOrEqual(0.01);
  });

  it("observes the time the task waited for its handler in mcp.tasks.queue_wait by tool", async () => {
    const found = await point("mcp.tasks.queue_wait", { tool: "sleep" }, observed);
    expect(found).toMatchObject({ kind: "histogram", unit: "s" });
  });

  it("counts the fetched result in mcp.tasks.results.fetched", async () => {
    const found = await point("mcp.tasks.results.fetched", {}, counted);
    expect(found.kind).toBe("sum");
  });

  it("reports the waiting tasks/result in mcp.tasks.results.waiting, back to 0 once it was answered", async () => {
    // Cumulative: the value is the sum of +1 (the wait began) and -1 (answered) so far. An
    // instrument never touched sends no point at all, so a 0 means the wait was counted and ended.
    const found = await point("mcp.tasks.results.waiting", {}, (p) => p.value === 0);
    expect(found).toMatchObject({ kind: "sum", unit: "{request}" });
  });

  it("reads the store into the mcp.tasks.current gauge at each export, by status", async () => {
    const found = await point("mcp.tasks.current", { status: "working" }, (p) => p.value !== undefined);
    expect(found).toMatchObject({ kind: "gauge", unit: "{task}" });
  });

  it("observes the store's operations in mcp.tasks.store.operation.duration, by operation", async () => {
    const found = await point("mcp.tasks.store.operation.duration", { operation: "create" }, observed);
    expect(found).toMatchObject({ kind: "histogram", unit: "s" });
  });

  it("sends metrics only, every export decoded as OTLP/JSON", async () => {
    await point("mcp.tasks.created", { tool: "sleep" }, counted);
    expect(receiver.failures).toEqual([]);
    expect(new Set(receiver.requests.map((r) => `${r.path} ${r.contentType}`))).toEqual(new Set(["/v1/metrics application/json"]));
  });
});
