import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import {
  callToolAsTask,
  captureLogger,
  cancelTask,
  expectRpcError,
  getTask,
  ISO_8601,
  probeTool,
  rpcError,
  taskResult,
  watchStatuses,
  type Probe,
} from "../../support/conformance.js";
import type { ConformanceFixture } from "../../support/conformance-fixtures.js";
import type { Requestor } from "../../support/plain-json-client.js";
import { on, STREAMING, useFixture, type ConformancePath } from "./paths.js";

export function lifecycleSuite(path: ConformancePath): void {
  const start = useFixture(path);
  const streaming = on(path, STREAMING);
  let fx: ConformanceFixture | undefined;

  /** Waits until the task reaches a terminal status (tasks/result blocks until then; its outcome is not needed). */
  async function settle(client: Requestor, taskId: string): Promise<void> {
    await taskResult(client, taskId).catch(() => {});
  }

  describe("T-LIFE: status lifecycle", () => {
    // Streaming paths only: it needs status notifications.
    streaming("T-LIFE-1: a task starts in working", async () => {
      let probe!: Probe;
      fx = await start({ setup: (app) => (probe = probeTool(app, "probe")) });
      const statuses = watchStatuses(fx.client);
      const created = await callToolAsTask(fx.client, "probe", {});
      expect(created.task.status).toBe("working");
      await probe.started;
      expect((await getTask(fx.client, created.task.taskId)).status).toBe("working");
      probe.finish();
      await statuses.until(created.task.taskId, "completed");
    });

    // Streaming paths only: it needs status notifications.
    streaming("T-LIFE-2: working → completed when the request succeeds", async () => {
      fx = await start();
      const statuses = watchStatuses(fx.client);
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 1 });
      await statuses.until(task.taskId, "completed");
      expect(statuses.statuses(task.taskId)).toEqual(["completed"]);
      expect((await getTask(fx.client, task.taskId)).status).toBe("completed");
    });

    // Streaming paths only: it needs status notifications.
    streaming("T-LIFE-2: working → failed when the request does not succeed", async () => {
      fx = await start();
      const statuses = watchStatuses(fx.client);
      const { task } = await callToolAsTask(fx.client, "fail", { message: "nope" });
      await statuses.until(task.taskId, "failed");
      expect(statuses.statuses(task.taskId)).toEqual(["failed"]);
    });

    // Streaming paths only: it needs status notifications.
    streaming("T-LIFE-2: working → cancelled on tasks/cancel", async () => {
      fx = await start();
      const statuses = watchStatuses(fx.client);
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 60_000 });
      await cancelTask(fx.client, task.taskId);
      await statuses.until(task.taskId, "cancelled");
      expect(statuses.statuses(task.taskId)).toEqual(["cancelled"]);
    });

    // Streaming paths only: it needs status notifications and to answer the server's requests.
    streaming("T-LIFE-2: working → input_required → working → completed around an elicitation", async () => {
      fx = await start();
      const statuses = watchStatuses(fx.client);
      fx.client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { answer: "yes" } }));
      const { task } = await callToolAsTask(fx.client, "ask", { question: "ok?" });
      await taskResult(fx.client, task.taskId);
      await statuses.until(task.taskId, "completed");
      expect(statuses.statuses(task.taskId)).toEqual(["input_required", "working", "completed"]);
    });

    // Streaming paths only: it needs status notifications.
    streaming("T-LIFE-2: input_required → cancelled on tasks/cancel", async () => {
      fx = await start();
      const statuses = watchStatuses(fx.client);
      const { task } = await callToolAsTask(fx.client, "ask", { question: "ok?" });
      await statuses.until(task.taskId, "input_required");
      const cancelled = await cancelTask(fx.client, task.taskId);
      expect(cancelled.status).toBe("cancelled");
      await statuses.until(task.taskId, "cancelled");
      expect(statuses.statuses(task.taskId)).toEqual(["input_required", "cancelled"]);
    });

    // Streaming paths only: it needs status notifications.
    streaming("T-LIFE-2: input_required → failed when the handler ends in an error while waiting", async () => {
      let probe!: Probe;
      fx = await start({ setup: (app) => (probe = probeTool(app, "probe")) });
      const statuses = watchStatuses(fx.client);
      const { task } = await callToolAsTask(fx.client, "probe", {});
      const ctx = await probe.started;
      // The handler asks, and (without waiting for the answer) ends with an isError result.
      void ctx.elicit({ mode: "form", message: "?", requestedSchema: { type: "object", properties: {} } }).catch(() => {});
      await statuses.until(task.taskId, "input_required");
      probe.finish({ content: [{ type: "text", text: "gave up" }], isError: true });
      await statuses.until(task.taskId, "failed");
      expect(statuses.statuses(task.taskId)).toEqual(["input_required", "failed"]);
      expect((await getTask(fx.client, task.taskId)).statusMessage).toBe("gave up");
    });

    it("T-LIFE-3: a completed task never moves again: cancel is refused and the status stays completed", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 1 });
      await settle(fx.client, task.taskId);
      await expectRpcError(cancelTask(fx.client, task.taskId), -32602);
      expect((await getTask(fx.client, task.taskId)).status).toBe("completed");
    });

    it("T-LIFE-3: a failed task never moves again", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "fail", { message: "bad" });
      await settle(fx.client, task.taskId);
      await expectRpcError(cancelTask(fx.client, task.taskId), -32602);
      const got = await getTask(fx.client, task.taskId);
      expect(got.status).toBe("failed");
      expect(got.statusMessage).toBe("bad");
    });

    it("T-LIFE-3: a terminal task's lastUpdatedAt no longer changes", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 1 });
      await settle(fx.client, task.taskId);
      const first = await getTask(fx.client, task.taskId);
      await rpcError(cancelTask(fx.client, task.taskId));
      const second = await getTask(fx.client, task.taskId);
      expect(second.lastUpdatedAt).toBe(first.lastUpdatedAt);
      expect(second.status).toBe(first.status);
    });

    it("T-LIFE-4: a tool result with isError: true ends the task in failed with a diagnostic statusMessage", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "fail", { message: "disk full" });
      await settle(fx.client, task.taskId);
      const got = await getTask(fx.client, task.taskId);
      expect(got.status).toBe("failed");
      expect(got.statusMessage).toBe("disk full");
    });

    it("T-LIFE-4: a request ending in a JSON-RPC error ends the task in failed with the error's message as statusMessage", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "throw", { code: -32001, message: "quota exceeded" });
      await settle(fx.client, task.taskId);
      const got = await getTask(fx.client, task.taskId);
      expect(got.status).toBe("failed");
      expect(got.statusMessage).toBe("quota exceeded");
    });

    it("T-LIFE-4: an isError result without text still gets a statusMessage", async () => {
      let probe!: Probe;
      fx = await start({ setup: (app) => (probe = probeTool(app, "probe")) });
      const { task } = await callToolAsTask(fx.client, "probe", {});
      probe.finish({ content: [], isError: true });
      await settle(fx.client, task.taskId);
      const got = await getTask(fx.client, task.taskId);
      expect(got.status).toBe("failed");
      expect(got.statusMessage).toEqual(expect.any(String));
      expect(got.statusMessage?.length).toBeGreaterThan(0);
    });

    it("T-LIFE-5: a working task may carry a statusMessage", async () => {
      let probe!: Probe;
      fx = await start({ setup: (app) => (probe = probeTool(app, "probe")) });
      const { task } = await callToolAsTask(fx.client, "probe", {});
      const ctx = await probe.started;
      await ctx.setStatusMessage("halfway there");
      const got = await getTask(fx.client, task.taskId);
      expect(got.status).toBe("working");
      expect(got.statusMessage).toBe("halfway there");
      probe.finish();
    });

    it("T-LIFE-5: a completed task may carry no statusMessage", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 1 });
      await settle(fx.client, task.taskId);
      const got = await getTask(fx.client, task.taskId);
      expect(got.status).toBe("completed");
      expect(got.statusMessage).toBeUndefined();
    });
  });

  describe("T-GET: getting a task", () => {
    it("T-GET-1: tasks/get returns the Task with taskId, status, createdAt, lastUpdatedAt, ttl and pollInterval", async () => {
      fx = await start({ pollIntervalMs: 500 });
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 1 }, { ttl: 20_000 });
      await settle(fx.client, task.taskId);
      const got = await getTask(fx.client, task.taskId);
      expect(got).toMatchObject({ taskId: task.taskId, status: "completed", ttl: 20_000, pollInterval: 500, createdAt: task.createdAt });
      expect(got.lastUpdatedAt).toMatch(ISO_8601);
      expect(Date.parse(got.lastUpdatedAt)).toBeGreaterThanOrEqual(Date.parse(got.createdAt));
    });

    it("T-GET-1: lastUpdatedAt moves forward when the status changes", async () => {
      let now = Date.parse("2030-01-01T00:00:00.000Z");
      let probe!: Probe;
      fx = await start({ now: () => now, setup: (app) => (probe = probeTool(app, "probe")) });
      const { task } = await callToolAsTask(fx.client, "probe", {});
      expect(task.lastUpdatedAt).toBe("2030-01-01T00:00:00.000Z");
      await probe.started;
      now += 1500;
      probe.finish();
      await settle(fx.client, task.taskId);
      const got = await getTask(fx.client, task.taskId);
      expect(got.createdAt).toBe("2030-01-01T00:00:00.000Z");
      expect(got.lastUpdatedAt).toBe("2030-01-01T00:00:01.500Z");
    });

    it("T-ERR-8: a task whose execution failed is reported through its status, and tasks/get itself succeeds", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "throw", { code: -32050, message: "broken" });
      await settle(fx.client, task.taskId);
      await expect(getTask(fx.client, task.taskId)).resolves.toMatchObject({ status: "failed", statusMessage: "broken" });
    });
  });

  describe("T-SEC-5: audit log", () => {
    it("T-SEC-5: task creation, completion and retrieval are logged with the task id and owner", async () => {
      const logger = captureLogger();
      fx = await start({ logger });
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 1 });
      await taskResult(fx.client, task.taskId);
      const audit = logger.entries.filter((e) => e.obj["taskId"] === task.taskId && e.obj["audit"] !== undefined);
      expect(audit.map((e) => e.obj["audit"])).toEqual(["created", "completed", "retrieved"]);
      for (const entry of audit) expect(entry.obj).toHaveProperty("owner", null);
    });

    it("T-SEC-5: a cancel is logged for audit", async () => {
      const logger = captureLogger();
      fx = await start({ logger });
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 60_000 });
      await cancelTask(fx.client, task.taskId);
      expect(logger.entries.some((e) => e.obj["audit"] === "cancelled" && e.obj["taskId"] === task.taskId)).toBe(true);
    });

    it("T-SEC-5: failed lookups are logged, so enumeration attempts can be spotted", async () => {
      const logger = captureLogger();
      fx = await start({ logger });
      const unknown = "0b8f0a3e-8d47-4c52-9f0e-2f1d5c6b7a80";
      await rpcError(getTask(fx.client, unknown));
      expect(logger.entries.some((e) => e.obj["audit"] === "lookup_denied" && e.obj["taskId"] === unknown)).toBe(true);
    });
  });
}
