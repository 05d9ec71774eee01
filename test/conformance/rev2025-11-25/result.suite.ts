import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { TaskError } from "../../../src/core/errors.js";
import {
  AnyResultSchema,
  callTool,
  callToolAsTask,
  captureLogger,
  exchange,
  expectRpcError,
  getTask,
  probeTool,
  RELATED_TASK,
  rpcError,
  taskResult,
  track,
  watchStatuses,
  type Probe,
} from "../../support/conformance.js";
import type { ConformanceFixture } from "../../support/conformance-fixtures.js";
import { on, STREAMING, useFixture, type ConformancePath } from "./paths.js";

export function resultSuite(path: ConformancePath): void {
  const start = useFixture(path);
  const streaming = on(path, STREAMING);
  let fx: ConformanceFixture | undefined;

  describe("T-RES: result retrieval", () => {
    it("T-RES-1: tasks/result returns what tools/call would have returned: a CallToolResult", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 3 });
      const result = await taskResult(fx.client, task.taskId);
      const plain = await callTool(fx.client, "sleep", { ms: 3 });
      expect(result.content).toEqual(plain.content);
      expect(result.content).toEqual([{ type: "text", text: "slept 3 ms" }]);
    });

    it("T-RES-1: tasks/result keeps every field of the tool's result, structuredContent and _meta included", async () => {
      let probe!: Probe;
      fx = await start({ setup: (app) => (probe = probeTool(app, "probe")) });
      const { task } = await callToolAsTask(fx.client, "probe", {});
      probe.finish({ content: [{ type: "text", text: '{"n":1}' }], structuredContent: { n: 1 }, _meta: { "example.com/trace": "t-1" } });
      const result = await fx.client.request({ method: "tasks/result", params: { taskId: task.taskId } }, AnyResultSchema);
      expect(result["structuredContent"]).toEqual({ n: 1 });
      expect(result["content"]).toEqual([{ type: "text", text: '{"n":1}' }]);
      expect(result["_meta"]).toEqual({ "example.com/trace": "t-1", [RELATED_TASK]: { taskId: task.taskId } });
    });

    // Streaming paths only: it needs status notifications.
    streaming("T-RES-2: for a completed task tasks/result returns the final result, every time it is asked", async () => {
      fx = await start();
      const statuses = watchStatuses(fx.client);
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 1 });
      await statuses.until(task.taskId, "completed");
      const first = await taskResult(fx.client, task.taskId);
      const second = await taskResult(fx.client, task.taskId);
      expect(first.content).toEqual([{ type: "text", text: "slept 1 ms" }]);
      expect(second).toEqual(first);
    });

    // Streaming paths only: it needs status notifications.
    streaming("T-RES-2: for a failed task tasks/result returns the final result (an isError result)", async () => {
      fx = await start();
      const statuses = watchStatuses(fx.client);
      const { task } = await callToolAsTask(fx.client, "fail", { message: "no luck" });
      await statuses.until(task.taskId, "failed");
      const result = await taskResult(fx.client, task.taskId);
      expect(result.isError).toBe(true);
      expect(result.content).toEqual([{ type: "text", text: "no luck" }]);
    });

    it("T-RES-3: for a working task tasks/result blocks until the task is terminal", async () => {
      let probe!: Probe;
      fx = await start({ setup: (app) => (probe = probeTool(app, "probe")) });
      const { task } = await callToolAsTask(fx.client, "probe", {});
      await probe.started;
      const pending = track(taskResult(fx.client, task.taskId));
      // Several round trips later the result is still pending, and the task still working.
      for (let i = 0; i < 3; i++) expect((await getTask(fx.client, task.taskId)).status).toBe("working");
      expect(pending.settled()).toBe(false);
      probe.finish({ content: [{ type: "text", text: "finally" }] });
      expect((await pending.promise).content).toEqual([{ type: "text", text: "finally" }]);
    });

    it("T-RES-3: a blocked tasks/result is woken by the task's end, not by polling at pollInterval", async () => {
      let probe!: Probe;
      // A poll-driven implementation would answer no sooner than one minute after the task ends.
      fx = await start({ pollIntervalMs: 60_000, setup: (app) => (probe = probeTool(app, "probe")) });
      const { task } = await callToolAsTask(fx.client, "probe", {});
      await probe.started;
      const pending = taskResult(fx.client, task.taskId);
      await getTask(fx.client, task.taskId);
      const finishedAt = performance.now();
      probe.finish();
      await pending;
      expect(performance.now() - finishedAt).toBeLessThan(5_000);
    });

    it("T-RES-3: several requestors blocked on the same task's tasks/result are all answered", async () => {
      let probe!: Probe;
      fx = await start({ setup: (app) => (probe = probeTool(app, "probe")) });
      const other = await fx.connectClient();
      const { task } = await callToolAsTask(fx.client, "probe", {});
      await probe.started;
      const a = taskResult(fx.client, task.taskId);
      const b = taskResult(fx.client, task.taskId);
      const c = taskResult(other, task.taskId);
      probe.finish();
      for (const result of await Promise.all([a, b, c])) expect(result.content).toEqual([{ type: "text", text: "done" }]);
    });

    it("T-RES-4: a task whose request ended in a JSON-RPC error replays that error: same code and message", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "throw", { code: -32001, message: "Quota exceeded for project x" });
      await expectRpcError(taskResult(fx.client, task.taskId), -32001, "Quota exceeded for project x");
    });

    it("T-RES-4: the replayed error is exactly the error the plain request gets", async () => {
      fx = await start();
      const args = { code: -32099, message: "upstream said: no" };
      const plain = await rpcError(callTool(fx.client, "throw", args));
      const { task } = await callToolAsTask(fx.client, "throw", args);
      const replayed = await rpcError(taskResult(fx.client, task.taskId));
      expect({ code: replayed.code, message: replayed.message, data: replayed.data }).toEqual({
        code: plain.code,
        message: plain.message,
        data: plain.data,
      });
    });

    it("T-RES-4: the replayed error keeps its data, on the wire exactly as thrown", async () => {
      fx = await start({
        setup: (app) =>
          app.tool("reject", { input: z.object({}), taskSupport: "optional" }, async () => {
            throw new McpError(-32010, "Rate limited", { retryAfterMs: 1200 });
          }),
      });
      const { task } = await callToolAsTask(fx.client, "reject", {});
      await rpcError(taskResult(fx.client, task.taskId));
      const { response } = exchange(fx.traffic(), "tasks/result", (p) => p["taskId"] === task.taskId);
      expect(response?.error).toEqual({ code: -32010, message: "Rate limited", data: { retryAfterMs: 1200 } });
    });

    // Streaming paths only: it needs status notifications.
    streaming("T-RES-4: the error is replayed on every tasks/result, also after the task has been failed for a while", async () => {
      fx = await start();
      const statuses = watchStatuses(fx.client);
      const { task } = await callToolAsTask(fx.client, "throw", { code: -32002, message: "gone" });
      await statuses.until(task.taskId, "failed");
      await expectRpcError(taskResult(fx.client, task.taskId), -32002, "gone");
      await expectRpcError(taskResult(fx.client, task.taskId), -32002, "gone");
    });

    it("T-RES-4: a request that ended with an isError result gets a success response carrying that result", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "fail", { message: "bad input file" });
      const result = await taskResult(fx.client, task.taskId);
      expect(result).toMatchObject({ isError: true, content: [{ type: "text", text: "bad input file" }] });
    });

    it("T-ERR-4: a handler's unexpected exception ends the task failed, and tasks/result answers -32603 without a stack trace", async () => {
      const logger = captureLogger();
      fx = await start({
        logger,
        setup: (app) =>
          app.tool("explode", { input: z.object({}), taskSupport: "optional" }, async () => {
            throw new Error("secret: connection string postgres://admin:hunter2@db");
          }),
      });
      const { task } = await callToolAsTask(fx.client, "explode", {});
      const error = await expectRpcError(taskResult(fx.client, task.taskId), -32603);
      const { response } = exchange(fx.traffic(), "tasks/result", (p) => p["taskId"] === task.taskId);
      const wire = JSON.stringify(response);
      expect(wire).not.toContain("hunter2");
      expect(wire).not.toMatch(/\n\s+at /);
      expect(wire).not.toContain(".ts:");
      expect(error.data).toBeUndefined();
      const got = await getTask(fx.client, task.taskId);
      expect(got.status).toBe("failed");
      expect(got.statusMessage ?? "").not.toContain("hunter2");
      // The detail is kept for the operator, in the server's log.
      expect(logger.entries.some((e) => e.level === "error" && String(e.obj["err"]).includes("hunter2"))).toBe(true);
    });

    it("T-ERR-4/T-RES-4: a plain call whose handler throws unexpectedly gets the same -32603 'Internal error' tasks/result replays", async () => {
      fx = await start({
        setup: (app) =>
          app.tool("explode", { input: z.object({}), taskSupport: "optional" }, async () => {
            throw new Error("secret: connection string postgres://admin:hunter2@db");
          }),
      });
      const plain = await expectRpcError(callTool(fx.client, "explode", {}), -32603, "Internal error");
      const { task } = await callToolAsTask(fx.client, "explode", {});
      const replayed = await rpcError(taskResult(fx.client, task.taskId));
      expect({ code: replayed.code, message: replayed.message, data: replayed.data }).toEqual({
        code: plain.code,
        message: plain.message,
        data: plain.data,
      });
    });

    it("T-ERR-4: a handler that returns something that is not a CallToolResult ends the task failed with -32603", async () => {
      fx = await start({
        setup: (app) =>
          app.tool(
            "garbage",
            { input: z.object({}), taskSupport: "optional" },
            async () => ({ content: "not a list of content blocks" }) as never,
          ),
      });
      const { task } = await callToolAsTask(fx.client, "garbage", {});
      await expectRpcError(taskResult(fx.client, task.taskId), -32603);
      expect((await getTask(fx.client, task.taskId)).status).toBe("failed");
    });

    it("T-RES-4: a TaskError thrown by a handler is replayed with its own code and message", async () => {
      fx = await start({
        setup: (app) =>
          app.tool("typed", { input: z.object({}), taskSupport: "optional" }, async () => {
            throw TaskError.protocol(-32040, "Resource busy", { resource: "printer" });
          }),
      });
      const { task } = await callToolAsTask(fx.client, "typed", {});
      const error = await expectRpcError(taskResult(fx.client, task.taskId), -32040, "Resource busy");
      expect(error.data).toEqual({ resource: "printer" });
    });

    it("T-RES-5: the tasks/result response carries related-task _meta with the taskId", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 1 });
      const result = await taskResult(fx.client, task.taskId);
      expect(result._meta?.[RELATED_TASK]).toEqual({ taskId: task.taskId });
    });

    it("T-RES-5: the related-task _meta is on the wire response of tasks/result for a failed task too", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "fail", { message: "m" });
      await taskResult(fx.client, task.taskId);
      const { response } = exchange(fx.traffic(), "tasks/result", (p) => p["taskId"] === task.taskId);
      expect(response?.result?.["_meta"]).toEqual({ [RELATED_TASK]: { taskId: task.taskId } });
    });

    it("T-RES-6: tasks/get answers while a tasks/result for the same task is pending", async () => {
      let probe!: Probe;
      fx = await start({ setup: (app) => (probe = probeTool(app, "probe")) });
      const { task } = await callToolAsTask(fx.client, "probe", {});
      await probe.started;
      const pending = track(taskResult(fx.client, task.taskId));
      const got = await getTask(fx.client, task.taskId);
      expect(got).toMatchObject({ taskId: task.taskId, status: "working" });
      expect(pending.settled()).toBe(false);
      probe.finish();
      await pending.promise;
      expect((await getTask(fx.client, task.taskId)).status).toBe("completed");
    });

    // Streaming paths only: it needs status notifications.
    streaming("T-RES-2: a task finished while no one waited is still answered when the requestor reconnects", async () => {
      fx = await start();
      const first = await fx.connectClient();
      const statuses = watchStatuses(first);
      const { task } = await callToolAsTask(first, "sleep", { ms: 1 });
      await statuses.until(task.taskId, "completed");
      await first.close();
      const again = await fx.connectClient();
      expect((await taskResult(again, task.taskId)).content).toEqual([{ type: "text", text: "slept 1 ms" }]);
    });
  });
}
