import { CallToolResultSchema, ElicitRequestSchema, GetTaskResultSchema, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  AnyResultSchema,
  Awaitable,
  callToolAsTask,
  exchange,
  expectRpcError,
  getTask,
  isNotification,
  isRequest,
  RELATED_TASK,
  taskResult,
  watchStatuses,
} from "../../support/conformance.js";
import type { ConformanceFixture } from "../../support/conformance-fixtures.js";
import { on, STREAMING, useFixture, type ConformancePath } from "./paths.js";

export function metaSuite(path: ConformancePath): void {
  const start = useFixture(path);
  const streaming = on(path, STREAMING);
  let fx: ConformanceFixture | undefined;

  const related = (taskId: string) => ({ _meta: { [RELATED_TASK]: { taskId } } });
  const metaOf = (value: unknown) => (value as { _meta?: Record<string, unknown> } | undefined)?._meta?.[RELATED_TASK];

  describe("T-META: related-task metadata", () => {
    // Streaming paths only: it needs progress notifications and to answer the server's requests.
    streaming("T-META-1: every request, notification and response the server sends about a task carries related-task _meta", async () => {
      fx = await start({
        setup: (app) =>
          app.tool("interview", { input: z.object({}), taskSupport: "optional" }, async (_args, ctx) => {
            ctx.progress(1, 2);
            await ctx.elicit({ mode: "form", message: "More?", requestedSchema: { type: "object", properties: {} } });
            ctx.progress(2, 2);
            return { content: [{ type: "text", text: "done" }] };
          }),
      });
      fx.client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: {} }));
      const progressed = new Awaitable<Progress>();
      const { task } = await callToolAsTask(fx.client, "interview", {}, {}, { onprogress: (p) => progressed.push(p) });
      await taskResult(fx.client, task.taskId);
      // Over HTTP the progress may travel on another stream than the result (the GET stream), so
      // it can arrive after it: wait for the last step before reading the wire log.
      await progressed.until((p) => p.progress === 2);
      const { received } = fx.traffic();
      const requests = received.filter(isRequest);
      const progress = received.filter(isNotification).filter((m) => m.method === "notifications/progress");
      const { response } = exchange(fx.traffic(), "tasks/result");
      expect(requests.map((m) => m.method)).toEqual(["elicitation/create"]);
      expect(progress).toHaveLength(2);
      for (const message of [...requests.map((m) => m.params), ...progress.map((m) => m.params), response?.result]) {
        expect(metaOf(message)).toEqual({ taskId: task.taskId });
      }
    });

    // Streaming paths only: it needs status notifications and to answer the server's requests.
    streaming("T-META-1: the requests of two concurrent tasks each carry their own task's id", async () => {
      fx = await start();
      const statuses = watchStatuses(fx.client);
      const seen = new Map<string, unknown>();
      fx.client.setRequestHandler(ElicitRequestSchema, async (request) => {
        seen.set(request.params.message, metaOf(request.params));
        return { action: "accept", content: { answer: request.params.message } };
      });
      const a = (await callToolAsTask(fx.client, "ask", { question: "A?" })).task.taskId;
      const b = (await callToolAsTask(fx.client, "ask", { question: "B?" })).task.taskId;
      await Promise.all([statuses.until(a, "input_required"), statuses.until(b, "input_required")]);
      const [ra, rb] = await Promise.all([taskResult(fx.client, a), taskResult(fx.client, b)]);
      expect(ra.content).toEqual([{ type: "text", text: "answer: A?" }]);
      expect(rb.content).toEqual([{ type: "text", text: "answer: B?" }]);
      expect(seen.get("A?")).toEqual({ taskId: a });
      expect(seen.get("B?")).toEqual({ taskId: b });
    });

    it("T-META-2: tasks/get answers for params.taskId and ignores related-task _meta naming another task", async () => {
      fx = await start();
      const running = (await callToolAsTask(fx.client, "sleep", { ms: 600_000 })).task.taskId;
      const done = (await callToolAsTask(fx.client, "sleep", { ms: 0 })).task.taskId;
      await taskResult(fx.client, done);
      const got = await fx.client.request({ method: "tasks/get", params: { taskId: done, ...related(running) } }, GetTaskResultSchema);
      expect(got).toMatchObject({ taskId: done, status: "completed" });
    });

    it("T-META-2: tasks/result answers for params.taskId and ignores related-task _meta naming another task", async () => {
      fx = await start();
      const running = (await callToolAsTask(fx.client, "sleep", { ms: 600_000 })).task.taskId;
      const done = (await callToolAsTask(fx.client, "sleep", { ms: 7 })).task.taskId;
      const result = await fx.client.request(
        { method: "tasks/result", params: { taskId: done, ...related(running) } },
        CallToolResultSchema,
      );
      expect(result.content).toEqual([{ type: "text", text: "slept 7 ms" }]);
      expect(result._meta?.[RELATED_TASK]).toEqual({ taskId: done });
    });

    it("T-META-2: tasks/cancel cancels params.taskId only, whatever task related-task _meta names", async () => {
      fx = await start();
      const keep = (await callToolAsTask(fx.client, "sleep", { ms: 600_000 })).task.taskId;
      const stop = (await callToolAsTask(fx.client, "sleep", { ms: 600_000 })).task.taskId;
      const cancelled = await fx.client.request({ method: "tasks/cancel", params: { taskId: stop, ...related(keep) } }, AnyResultSchema);
      expect(cancelled).toMatchObject({ taskId: stop, status: "cancelled" });
      expect((await getTask(fx.client, keep)).status).toBe("working");
    });

    it("T-META-2: related-task _meta naming an unknown task is ignored", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 600_000 });
      const got = await fx.client.request(
        { method: "tasks/get", params: { taskId: task.taskId, ...related("00000000-0000-4000-8000-00000000dead") } },
        GetTaskResultSchema,
      );
      expect(got.taskId).toBe(task.taskId);
    });

    it("T-META-2: related-task _meta is not a source of the taskId: without params.taskId the request is invalid (-32602)", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 600_000 });
      await expectRpcError(fx.client.request({ method: "tasks/get", params: related(task.taskId) }, AnyResultSchema), -32602, /taskId/);
      await expectRpcError(fx.client.request({ method: "tasks/result", params: related(task.taskId) }, AnyResultSchema), -32602, /taskId/);
      await expectRpcError(fx.client.request({ method: "tasks/cancel", params: related(task.taskId) }, AnyResultSchema), -32602, /taskId/);
      expect((await getTask(fx.client, task.taskId)).status).toBe("working");
    });

    it("T-META-3: the tasks/get result carries no related-task _meta", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 600_000 });
      await getTask(fx.client, task.taskId);
      const { response } = exchange(fx.traffic(), "tasks/get");
      expect(response?.result).toBeDefined();
      expect(metaOf(response?.result)).toBeUndefined();
    });

    it("T-META-3: the tasks/list result carries no related-task _meta, neither on the page nor on its tasks", async () => {
      fx = await start();
      await callToolAsTask(fx.client, "sleep", { ms: 600_000 });
      await fx.client.request({ method: "tasks/list", params: {} }, AnyResultSchema);
      const { response } = exchange(fx.traffic(), "tasks/list");
      expect(metaOf(response?.result)).toBeUndefined();
      const tasks = response?.result?.["tasks"] as unknown[];
      expect(tasks).toHaveLength(1);
      for (const task of tasks) expect(metaOf(task)).toBeUndefined();
    });

    it("T-META-3: the tasks/cancel result carries no related-task _meta", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 600_000 });
      await fx.client.request({ method: "tasks/cancel", params: { taskId: task.taskId } }, AnyResultSchema);
      const { response } = exchange(fx.traffic(), "tasks/cancel");
      expect(response?.result).toMatchObject({ status: "cancelled" });
      expect(metaOf(response?.result)).toBeUndefined();
    });
  });
}
