import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect } from "vitest";
import { z } from "zod";
import {
  Awaitable,
  callToolAsTask,
  cancelTask,
  captureLogger,
  exchange,
  getTask,
  isNotification,
  ISO_8601,
  probeTool,
  RELATED_TASK,
  taskResult,
  watchStatuses,
  type Probe,
} from "../../support/conformance.js";
import type { Traffic } from "../../support/in-memory-fixture.js";
import type { ConformanceFixture } from "../../support/conformance-fixtures.js";
import { on, STREAMING, useFixture, type ConformancePath } from "./paths.js";

export function progressAndNotificationsSuite(path: ConformancePath): void {
  const start = useFixture(path);
  const streaming = on(path, STREAMING);
  let fx: ConformanceFixture | undefined;

  /** The notifications/progress the client received, as sent on the wire. */
  function progressOnWire(traffic: Traffic) {
    return traffic.received.filter(isNotification).filter((m) => m.method === "notifications/progress");
  }

  function statusOnWire(traffic: Traffic) {
    return traffic.received.filter(isNotification).filter((m) => m.method === "notifications/tasks/status");
  }

  describe("T-PROG: progress", () => {
    // Streaming paths only: it needs progress notifications.
    streaming("T-PROG-1: a task's progress reaches the requestor's onprogress after the CreateTaskResult, steps 1..n of n", async () => {
      fx = await start();
      const progress = new Awaitable<Progress>();
      await callToolAsTask(fx.client, "sleep", { ms: 40, steps: 4 }, {}, { onprogress: (p) => progress.push(p) });
      await progress.until((p) => p.progress === 4);
      expect(progress.items.map((p) => [p.progress, p.total])).toEqual([
        [1, 4],
        [2, 4],
        [3, 4],
        [4, 4],
      ]);
    });

    // Streaming paths only: it needs progress notifications.
    streaming("T-PROG-1: every progress notification carries the original request's progressToken", async () => {
      fx = await start();
      const progress = new Awaitable<Progress>();
      await callToolAsTask(fx.client, "sleep", { ms: 30, steps: 3 }, {}, { onprogress: (p) => progress.push(p) });
      await progress.until((p) => p.progress === 3);
      const { request } = exchange(fx.traffic(), "tools/call");
      const token = (request.params?.["_meta"] as { progressToken?: unknown } | undefined)?.progressToken;
      expect(token).toBeDefined();
      const notes = progressOnWire(fx.traffic());
      expect(notes).toHaveLength(3);
      for (const note of notes) expect(note.params?.["progressToken"]).toBe(token);
    });

    // Streaming paths only: it needs progress notifications.
    streaming("T-PROG-1: progress notifications are sent after the CreateTaskResult, none before it", async () => {
      fx = await start();
      const progress = new Awaitable<Progress>();
      await callToolAsTask(fx.client, "sleep", { ms: 20, steps: 2 }, {}, { onprogress: (p) => progress.push(p) });
      await progress.until((p) => p.progress === 2);
      const { responseIndex } = exchange(fx.traffic(), "tools/call");
      const received = fx.traffic().received;
      const firstProgress = received.findIndex((m) => isNotification(m) && m.method === "notifications/progress");
      expect(responseIndex).toBeGreaterThanOrEqual(0);
      expect(firstProgress).toBeGreaterThan(responseIndex);
    });

    // Streaming paths only: it needs progress notifications.
    streaming("T-PROG-1/T-META-1: a task's progress notifications carry related-task _meta", async () => {
      fx = await start();
      const progress = new Awaitable<Progress>();
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 10, steps: 2 }, {}, { onprogress: (p) => progress.push(p) });
      await progress.until((p) => p.progress === 2);
      for (const note of progressOnWire(fx.traffic())) {
        expect((note.params?.["_meta"] as Record<string, unknown>)[RELATED_TASK]).toEqual({ taskId: task.taskId });
      }
    });

    // Streaming paths only: it needs progress notifications and to answer the server's requests.
    streaming("T-PROG-1: the progressToken stays valid for the whole task, also after an input_required phase", async () => {
      fx = await start({
        setup: (app) =>
          app.tool("interview", { input: z.object({}), taskSupport: "optional" }, async (_args, ctx) => {
            ctx.progress(1, 2, "asking");
            await ctx.elicit({ mode: "form", message: "Go on?", requestedSchema: { type: "object", properties: {} } });
            ctx.progress(2, 2, "answered");
            return { content: [{ type: "text", text: "ok" }] };
          }),
      });
      fx.client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: {} }));
      const progress = new Awaitable<Progress>();
      const { task } = await callToolAsTask(fx.client, "interview", {}, {}, { onprogress: (p) => progress.push(p) });
      await taskResult(fx.client, task.taskId);
      await progress.until((p) => p.progress === 2);
      expect(progress.items.map((p) => p.message)).toEqual(["asking", "answered"]);
      const { request } = exchange(fx.traffic(), "tools/call");
      const token = (request.params?.["_meta"] as { progressToken?: unknown }).progressToken;
      expect(progressOnWire(fx.traffic()).map((n) => n.params?.["progressToken"])).toEqual([token, token]);
    });

    // Streaming paths only: it needs status notifications.
    streaming("T-PROG-1: a task created without a progressToken sends no progress notifications", async () => {
      fx = await start();
      const statuses = watchStatuses(fx.client);
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 10, steps: 5 });
      await statuses.until(task.taskId, "completed");
      await getTask(fx.client, task.taskId);
      expect(progressOnWire(fx.traffic())).toEqual([]);
    });

    // Streaming paths only: it needs progress notifications.
    streaming("T-PROG-1: no progress is sent after a cancel (sleep stops reporting)", async () => {
      const logger = captureLogger();
      fx = await start({ logger });
      const progress = new Awaitable<Progress>();
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 2_000, steps: 100 }, {}, { onprogress: (p) => progress.push(p) });
      await progress.until((p) => p.progress === 2);
      await cancelTask(fx.client, task.taskId);
      const { responseIndex } = exchange(fx.traffic(), "tasks/cancel");
      await logger.until((e) => e.msg === "handler ended after abort" && e.obj["taskId"] === task.taskId);
      await getTask(fx.client, task.taskId);
      const afterCancel = fx
        .traffic()
        .received.slice(responseIndex + 1)
        .filter((m) => isNotification(m) && m.method === "notifications/progress");
      expect(afterCancel).toEqual([]);
    });

    // Streaming paths only: it needs progress notifications.
    streaming("T-PROG-1: progress a handler reports after its task was cancelled is dropped", async () => {
      const logger = captureLogger();
      let probe!: Probe;
      fx = await start({ logger, setup: (app) => (probe = probeTool(app, "probe")) });
      const progress = new Awaitable<Progress>();
      const { task } = await callToolAsTask(fx.client, "probe", {}, {}, { onprogress: (p) => progress.push(p) });
      const ctx = await probe.started;
      ctx.progress(1, 2);
      await progress.until((p) => p.progress === 1);
      await cancelTask(fx.client, task.taskId);
      ctx.progress(2, 2);
      probe.finish();
      await logger.until((e) => e.msg === "late outcome dropped: task already terminal" && e.obj["taskId"] === task.taskId);
      await getTask(fx.client, task.taskId);
      expect(progressOnWire(fx.traffic()).map((n) => n.params?.["progress"])).toEqual([1]);
    });
  });

  describe("T-NOTE: status notifications", () => {
    // Streaming paths only: it needs status notifications.
    streaming("T-NOTE-1: notifications/tasks/status carries the full Task on each transition", async () => {
      fx = await start({ pollIntervalMs: 300 });
      const statuses = watchStatuses(fx.client);
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 1 }, { ttl: 90_000 });
      const completed = await statuses.until(task.taskId, "completed");
      expect(statuses.statuses(task.taskId)).toEqual(["completed"]);
      expect(completed).toMatchObject({
        taskId: task.taskId,
        status: "completed",
        ttl: 90_000,
        pollInterval: 300,
        createdAt: task.createdAt,
      });
      expect(completed.lastUpdatedAt).toMatch(ISO_8601);
      expect(completed).toEqual(await getTask(fx.client, task.taskId));
    });

    // Streaming paths only: it needs status notifications.
    streaming("T-NOTE-1: a cancel is notified too, with the cancelled Task", async () => {
      fx = await start();
      const statuses = watchStatuses(fx.client);
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 60_000 });
      const cancelled = await cancelTask(fx.client, task.taskId);
      const note = await statuses.until(task.taskId, "cancelled");
      expect(note).toMatchObject({ taskId: task.taskId, status: "cancelled", statusMessage: cancelled.statusMessage });
    });

    // Streaming paths only: it needs status notifications.
    streaming("T-NOTE-1: a failure is notified with its diagnostic statusMessage", async () => {
      fx = await start();
      const statuses = watchStatuses(fx.client);
      const { task } = await callToolAsTask(fx.client, "fail", { message: "out of paper" });
      expect(await statuses.until(task.taskId, "failed")).toMatchObject({ status: "failed", statusMessage: "out of paper" });
    });

    // Streaming paths only: it needs status notifications and to answer the server's requests.
    streaming("T-NOTE-1: input_required and the return to working are notified", async () => {
      fx = await start();
      const statuses = watchStatuses(fx.client);
      fx.client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { answer: "a" } }));
      const { task } = await callToolAsTask(fx.client, "ask", { question: "?" });
      await statuses.until(task.taskId, "input_required");
      await taskResult(fx.client, task.taskId);
      await statuses.until(task.taskId, "completed");
      expect(statuses.statuses(task.taskId)).toEqual(["input_required", "working", "completed"]);
    });

    // Streaming paths only: it needs status notifications.
    streaming("T-NOTE-3: status notifications carry no related-task _meta", async () => {
      fx = await start();
      const statuses = watchStatuses(fx.client);
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 1 });
      await statuses.until(task.taskId, "completed");
      const notes = statusOnWire(fx.traffic());
      expect(notes.length).toBeGreaterThanOrEqual(1);
      for (const note of notes) expect((note.params?.["_meta"] as Record<string, unknown> | undefined)?.[RELATED_TASK]).toBeUndefined();
    });

    // Streaming paths only: it needs status notifications.
    streaming("T-NOTE-1: creation is not a status change: no notification repeats the CreateTaskResult's working", async () => {
      fx = await start();
      const statuses = watchStatuses(fx.client);
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 1 });
      await statuses.until(task.taskId, "completed");
      expect(statuses.statuses(task.taskId)).toEqual(["completed"]);
    });

    // Streaming paths only: it needs status notifications.
    streaming("T-NOTE-1: another session that neither created the task nor waits on it hears nothing of it", async () => {
      fx = await start();
      const other = await fx.connectClient();
      const statuses = watchStatuses(fx.client);
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 1 });
      await statuses.until(task.taskId, "completed");
      await getTask(other, task.taskId);
      expect(statusOnWire(fx.traffic(other))).toEqual([]);
    });

    // Streaming paths only: it needs status notifications.
    streaming("T-NOTE-1: a session blocked on the task's tasks/result hears its status change", async () => {
      let probe!: Probe;
      fx = await start({ setup: (app) => (probe = probeTool(app, "probe")) });
      const other = await fx.connectClient();
      const otherStatuses = watchStatuses(other);
      const { task } = await callToolAsTask(fx.client, "probe", {});
      await probe.started;
      const result = taskResult(other, task.taskId);
      // Round trips after the tasks/result request: it is being served (and waiting) by now.
      await getTask(other, task.taskId);
      await getTask(other, task.taskId);
      probe.finish();
      await result;
      expect(await otherStatuses.until(task.taskId, "completed")).toMatchObject({ taskId: task.taskId, status: "completed" });
    });
  });
}
