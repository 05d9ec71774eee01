/**
 * Cluster metrics against the real PostgreSQL: queue depth and lease losses move when a worker
 * vanishes holding a task, on `/metrics` and through the OpenTelemetry metrics SDK alike.
 */
import { afterAll, describe, expect, it } from "vitest";
import { registerDemoTools } from "../../src/demo/demo-tools.js";
import { pgEventBus } from "../../src/events/pg-event-bus.js";
import { serveHttp } from "../../src/http/http-server.js";
import { createTaskServer } from "../../src/mcp/task-server.js";
import { TaskMetrics } from "../../src/metrics/task-metrics.js";
import { postgresStore } from "../../src/store/postgres/postgres-store.js";
import { callToolAsTask, getTask } from "../support/conformance.js";
import { connectHttpClient } from "../support/http-fixture.js";
import { installMeter, pointsOf } from "../support/otel-meter.js";
import { pgQuery, TEST_PG_URL, uniqueName } from "../support/postgres.js";
import { scrape, valueOf } from "../support/prometheus.js";

const schema = uniqueName("metrics");
afterAll(async () => {
  await pgQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
});

describe("cluster metrics", () => {
  it("shows queued tasks as queue depth, and counts a lost lease by what the reaper did with the task", async () => {
    const meter = installMeter();
    // A pure front node (no workers of its own) with a fast reaper.
    const app = registerDemoTools(
      createTaskServer({
        name: "front",
        version: "0.0.0",
        store: postgresStore(TEST_PG_URL, { schema }),
        bus: pgEventBus({ connectionString: TEST_PG_URL, channel: schema }),
        cluster: { workerId: "front", concurrency: 0, intervalMs: 50 },
        metrics: new TaskMetrics(),
      }),
    );
    const http = await serveHttp(app, { port: 0 });
    const c = await connectHttpClient(http.url);
    try {
      const sleep = await callToolAsTask(c.client, "sleep", { ms: 60_000 });
      expect(valueOf(await scrape(http.url), "mcp_tasks_queue_depth")).toBe(1);
      expect(pointsOf(await meter.collect(), "mcp.tasks.queue.depth")).toMatchObject([{ value: 1, unit: "{task}" }]);

      // A worker elsewhere claims it for 100 ms, then vanishes without renewing.
      const store = app.engine.store as ReturnType<typeof postgresStore>;
      const claimed = await store.claim("gone-worker", 1, 100, Date.now());
      expect(claimed.map((t) => t.id)).toEqual([sleep.task.taskId]);
      expect(valueOf(await scrape(http.url), "mcp_tasks_queue_depth")).toBe(0);

      const deadline = Date.now() + 10_000;
      while ((await getTask(c.client, sleep.task.taskId)).status !== "failed" && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 25));
      }
      const task = await getTask(c.client, sleep.task.taskId);
      expect(task.status).toBe("failed");
      expect(task.statusMessage).toMatch(/lease expired/);
      expect(valueOf(await scrape(http.url), "mcp_tasks_lease_losses_total", { tool: "sleep", action: "failed" })).toBe(1);
      expect(pointsOf(await meter.collect(), "mcp.tasks.lease_losses", { tool: "sleep", action: "failed" })).toMatchObject([{ value: 1 }]);
    } finally {
      await meter.uninstall();
      await c.close();
      await http.close();
      await app.close();
    }
  });
});
