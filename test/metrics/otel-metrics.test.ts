/**
 * The `/metrics` series that OpenTelemetry also gets, through the real metrics SDK registered as
 * the global meter provider: the gauges read from the store at each collection, store latency,
 * limit refusals and the wake-up of a waiting tasks/result, from a real HTTP server on a real
 * SQLite file. (Lease losses and the queue depth of a cluster: test/metrics/lease-metrics.test.ts.)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { TaskEvent } from "../../src/events/task-event.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { callToolAsTask, taskResult } from "../support/conformance.js";
import { rawPost, startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { installMeter, pointsOf, type InstalledMeter } from "../support/otel-meter.js";
import { Recorder } from "../support/recorder.js";

let dir: string;
let meter: InstalledMeter;
let fx: HttpServerFixture | undefined;
let files = 0;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-otel-metrics-"));
});

afterEach(async () => {
  await fx?.close();
  fx = undefined;
  await meter?.uninstall();
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A server on a SQLite file of its own, made after the meter provider is registered. */
async function start(options: Parameters<typeof startHttpServer>[0] = {}): Promise<HttpServerFixture> {
  meter = installMeter();
  fx = await startHttpServer({ ...options, app: { store: sqliteStore(join(dir, `tasks-${files++}.db`)), ...options.app } });
  return fx;
}

const sum = (points: { value?: number }[]): number => points.reduce((total, point) => total + (point.value ?? 0), 0);

describe("OpenTelemetry: the store-read gauges", () => {
  it("mcp.tasks.current reads the store at each collection: tasks working and waiting for input, by status", async () => {
    const server = await start();
    const events = new Recorder<TaskEvent>();
    server.app.engine.bus.onAny((event) => events.push(event));
    const { client } = await server.connect();
    await callToolAsTask(client, "sleep", { ms: 60_000 });
    await callToolAsTask(client, "sleep", { ms: 60_000 });
    const asking = await callToolAsTask(client, "ask", { question: "Name?" });
    await events.waitFor(
      (e) => e.type === "status" && e.taskId === asking.task.taskId && e.status === "input_required",
      "ask to need input",
    );
    const points = await meter.collect();
    expect(pointsOf(points, "mcp.tasks.current", { status: "working" })).toMatchObject([{ value: 2, unit: "{task}" }]);
    expect(pointsOf(points, "mcp.tasks.current", { status: "input_required" })).toMatchObject([{ value: 1 }]);
  });

  it("mcp.tasks.queued counts the tasks waiting for a handler, by owner and tool", async () => {
    const server = await start({ app: { maxRunning: 1 } });
    const { client } = await server.connect();
    for (let i = 0; i < 3; i++) await callToolAsTask(client, "sleep", { ms: 60_000 });
    const queued = pointsOf(await meter.collect(), "mcp.tasks.queued", { tool: "sleep" });
    expect(sum(queued)).toBe(2);
    expect(queued.every((point) => typeof point.attributes["owner"] === "string")).toBe(true);
  });
});

describe("OpenTelemetry: what /metrics counts as it happens", () => {
  it("mcp.tasks.store.operation.duration observes every store call by operation, in seconds", async () => {
    const server = await start();
    const { client } = await server.connect();
    const created = await callToolAsTask(client, "sleep", { ms: 1 });
    await taskResult(client, created.task.taskId);
    const points = await meter.collect();
    const creates = pointsOf(points, "mcp.tasks.store.operation.duration", { operation: "create" });
    expect(creates).toMatchObject([{ count: 1, unit: "s" }]);
    expect(creates[0]!.sum).toBeGreaterThan(0);
    expect(pointsOf(points, "mcp.tasks.store.errors")).toEqual([]);
  });

  it("mcp.tasks.limit_rejections counts a refusal by its limit", async () => {
    const server = await start({ http: { maxBodyBytes: 1000 } });
    const refused = await rawPost(server.url, "x".repeat(2000));
    expect(refused.status).toBe(413);
    expect(pointsOf(await meter.collect(), "mcp.tasks.limit_rejections", { limit: "body_bytes" })).toMatchObject([{ value: 1 }]);
  });

  it("mcp.tasks.results.wakeup observes a tasks/result that waited; one that found the task done is not", async () => {
    const server = await start();
    const { client } = await server.connect();
    const created = await callToolAsTask(client, "sleep", { ms: 100 });
    await taskResult(client, created.task.taskId);
    await taskResult(client, created.task.taskId);
    const woken = pointsOf(await meter.collect(), "mcp.tasks.results.wakeup");
    expect(woken).toMatchObject([{ count: 1, unit: "s" }]);
    expect(woken[0]!.sum).toBeLessThan(1);
  });
});
