/**
 * /metrics over real HTTP while real tasks run: the counters, gauges and histograms move with
 * what the server does.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { TaskEvent } from "../../src/events/task-event.js";
import { callToolAsTask, cancelTask, expectRpcError, taskResult } from "../support/conformance.js";
import { rawPost, startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { scrape, valueOf } from "../support/prometheus.js";
import { Recorder } from "../support/recorder.js";

let fx: HttpServerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

describe("/metrics", () => {
  it("counts tasks created and finished by tool and status, with their durations", async () => {
    fx = await startHttpServer();
    const { client } = await fx.connect();
    const before = await scrape(fx.url);
    expect(valueOf(before, "mcp_tasks_created_total", { tool: "sleep" })).toBe(0);

    const done = await callToolAsTask(client, "sleep", { ms: 5 });
    await taskResult(client, done.task.taskId);
    const failed = await callToolAsTask(client, "fail", { message: "no" });
    await taskResult(client, failed.task.taskId);
    const long = await callToolAsTask(client, "sleep", { ms: 60_000 });
    await cancelTask(client, long.task.taskId);

    const after = await scrape(fx.url);
    expect(valueOf(after, "mcp_tasks_created_total", { tool: "sleep" })).toBe(2);
    expect(valueOf(after, "mcp_tasks_created_total", { tool: "fail" })).toBe(1);
    expect(valueOf(after, "mcp_tasks_finished_total", { tool: "sleep", status: "completed" })).toBe(1);
    expect(valueOf(after, "mcp_tasks_finished_total", { tool: "sleep", status: "cancelled" })).toBe(1);
    expect(valueOf(after, "mcp_tasks_finished_total", { tool: "fail", status: "failed" })).toBe(1);
    expect(valueOf(after, "mcp_tasks_duration_seconds_count", { tool: "sleep", status: "completed" })).toBe(1);
    expect(valueOf(after, "mcp_tasks_duration_seconds_sum", { tool: "sleep", status: "completed" })).toBeGreaterThan(0);
  });

  it("the current gauge shows tasks working and waiting for input, read from the store", async () => {
    fx = await startHttpServer();
    const events = new Recorder<TaskEvent>();
    fx.app.engine.bus.onAny((event) => events.push(event));
    const { client } = await fx.connect();
    await callToolAsTask(client, "sleep", { ms: 60_000 });
    await callToolAsTask(client, "sleep", { ms: 60_000 });
    const asking = await callToolAsTask(client, "ask", { question: "Name?" });
    // The handler queues its question and moves the task to input_required on its own.
    await events.waitFor(
      (e) => e.type === "status" && e.taskId === asking.task.taskId && e.status === "input_required",
      "ask to need input",
    );
    const samples = await scrape(fx.url);
    expect(valueOf(samples, "mcp_tasks_current", { status: "working" })).toBe(2);
    expect(valueOf(samples, "mcp_tasks_current", { status: "input_required" })).toBe(1);
  });

  it("a tasks/result that waited is observed in the wake-up histogram; one that found the task done is not", async () => {
    fx = await startHttpServer();
    const { client } = await fx.connect();
    const created = await callToolAsTask(client, "sleep", { ms: 100 });
    await taskResult(client, created.task.taskId);
    const once = await scrape(fx.url);
    expect(valueOf(once, "mcp_tasks_result_wakeup_seconds_count")).toBe(1);
    // Event-driven: the waiter is answered well within the 30 s backstop.
    expect(valueOf(once, "mcp_tasks_result_wakeup_seconds_bucket", { le: "1" })).toBe(1);

    await taskResult(client, created.task.taskId);
    expect(valueOf(await scrape(fx.url), "mcp_tasks_result_wakeup_seconds_count")).toBe(1);
  });

  it("the waiting gauge counts the tasks/result requests held open for their task, and drops as they are answered", async () => {
    const server = (fx = await startHttpServer());
    const { client } = await server.connect();
    const short = await callToolAsTask(client, "sleep", { ms: 60_000 });
    const long = await callToolAsTask(client, "sleep", { ms: 60_000 });
    expect(valueOf(await scrape(fx.url), "mcp_tasks_results_waiting")).toBe(0);
    const waits = [taskResult(client, short.task.taskId), taskResult(client, long.task.taskId).catch(() => null)];
    await expect.poll(async () => valueOf(await scrape(server.url), "mcp_tasks_results_waiting")).toBe(2);
    await cancelTask(client, short.task.taskId);
    await waits[0]?.catch(() => null);
    expect(valueOf(await scrape(fx.url), "mcp_tasks_results_waiting")).toBe(1);
    // A request that did not have to wait (its task had ended) is never counted.
    await taskResult(client, short.task.taskId).catch(() => null);
    expect(valueOf(await scrape(fx.url), "mcp_tasks_results_waiting")).toBe(1);
  });

  it("a result fetched again writes no second fetched mark: one markFetched however often it is fetched", async () => {
    fx = await startHttpServer();
    const { client } = await fx.connect();
    const created = await callToolAsTask(client, "sleep", { ms: 1 });
    const marks = async (): Promise<number> =>
      valueOf(await scrape(fx!.url), "mcp_tasks_store_operation_seconds_count", { operation: "markFetched" });
    await taskResult(client, created.task.taskId);
    await expect.poll(marks).toBe(1);
    for (let i = 0; i < 5; i++) await taskResult(client, created.task.taskId);
    expect(await marks()).toBe(1);
    expect(valueOf(await scrape(fx.url), "mcp_tasks_results_fetched_total")).toBe(1);
  });

  it("counts limit rejections by limit: active tasks per owner, argument size, body size", async () => {
    fx = await startHttpServer({ app: { maxActivePerOwner: 1, maxArgumentBytes: 100 }, http: { maxBodyBytes: 2000 } });
    const connection = await fx.connect();
    await callToolAsTask(connection.client, "sleep", { ms: 60_000 });
    await expectRpcError(callToolAsTask(connection.client, "sleep", { ms: 1 }), -32600, /Too many active tasks/);
    await expectRpcError(callToolAsTask(connection.client, "echo", { text: "x".repeat(200) }), -32602, /bytes/);
    const huge = await rawPost(fx.url, { jsonrpc: "2.0", id: 9, method: "ping", pad: "x".repeat(5000) }, connection.headers());
    expect(huge.status).toBe(413);

    const samples = await scrape(fx.url);
    expect(valueOf(samples, "mcp_tasks_limit_rejections_total", { limit: "active_tasks" })).toBe(1);
    expect(valueOf(samples, "mcp_tasks_limit_rejections_total", { limit: "argument_bytes" })).toBe(1);
    expect(valueOf(samples, "mcp_tasks_limit_rejections_total", { limit: "body_bytes" })).toBe(1);
  });

  it("times store operations by operation", async () => {
    fx = await startHttpServer();
    const { client } = await fx.connect();
    const created = await callToolAsTask(client, "sleep", { ms: 1 });
    await taskResult(client, created.task.taskId);
    const samples = await scrape(fx.url);
    expect(valueOf(samples, "mcp_tasks_store_operation_seconds_count", { operation: "create" })).toBe(1);
    expect(valueOf(samples, "mcp_tasks_store_operation_seconds_count", { operation: "transition" })).toBeGreaterThanOrEqual(1);
    expect(valueOf(samples, "mcp_tasks_store_errors_total", { operation: "create" })).toBe(0);
  });

  it("two servers in one process keep separate registries", async () => {
    fx = await startHttpServer();
    const other = await startHttpServer();
    try {
      const { client } = await fx.connect();
      await callToolAsTask(client, "sleep", { ms: 1 });
      expect(valueOf(await scrape(fx.url), "mcp_tasks_created_total", { tool: "sleep" })).toBe(1);
      expect(valueOf(await scrape(other.url), "mcp_tasks_created_total", { tool: "sleep" })).toBe(0);
    } finally {
      await other.close();
    }
  });
});
