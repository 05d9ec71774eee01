import { CallToolResultSchema, ListToolsResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  AnyResultSchema,
  callTool,
  callToolAsTask,
  expectRpcError,
  getTask,
  ISO_8601,
  listAllTasks,
  MODEL_IMMEDIATE_RESPONSE,
  probeTool,
  taskResult,
  track,
} from "../../support/conformance.js";
import type { ConformanceFixture } from "../../support/conformance-fixtures.js";
import { useFixture, type ConformancePath } from "./paths.js";

export function capabilitiesAndToolsSuite(path: ConformancePath): void {
  const start = useFixture(path);
  let fx: ConformanceFixture | undefined;

  const TASK_ID = /^[0-9a-z]{9}[0-9a-f]{32}$/;

  describe("T-CAP: capabilities", () => {
    it("T-CAP-1: the server declares capabilities.tasks during initialization", async () => {
      fx = await start();
      expect(fx.client.getServerCapabilities()?.tasks).toBeDefined();
    });

    it("T-CAP-2/T-CAP-5: the server declares tasks.list, tasks.cancel and tasks.requests.tools.call", async () => {
      fx = await start();
      const tasks = fx.client.getServerCapabilities()?.tasks;
      expect(tasks?.list).toEqual({});
      expect(tasks?.cancel).toEqual({});
      expect(tasks?.requests?.tools?.call).toEqual({});
    });

    it("T-CAP-4: tasks.requests lists only tools/call, the one request type the server accepts as a task", async () => {
      fx = await start();
      expect(fx.client.getServerCapabilities()?.tasks?.requests).toEqual({ tools: { call: {} } });
    });

    it("T-CAP-5: the declared tasks/list and tasks/cancel methods are served", async () => {
      fx = await start();
      const list = await fx.client.request({ method: "tasks/list", params: {} }, AnyResultSchema);
      expect(list).toHaveProperty("tasks");
      const created = await callToolAsTask(fx.client, "sleep", { ms: 60_000 });
      const cancelled = await fx.client.request({ method: "tasks/cancel", params: { taskId: created.task.taskId } }, AnyResultSchema);
      expect(cancelled).toMatchObject({ taskId: created.task.taskId, status: "cancelled" });
    });
  });

  describe("T-TOOL: tool-level negotiation", () => {
    it("T-TOOL-2/3/4: tools/list gives every tool its execution.taskSupport, forbidden when the tool declares none", async () => {
      fx = await start();
      const { tools } = await fx.client.request({ method: "tools/list", params: {} }, ListToolsResultSchema);
      const support = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
      expect(support).toEqual({
        echo: "forbidden",
        sleep: "optional",
        fail: "optional",
        throw: "optional",
        ask: "optional",
        nap: "optional",
        approve: "required",
        sample: "optional",
        batch: "required",
        steps: "optional",
      });
    });

    it("T-TOOL-2: a forbidden tool called as a task is refused with -32601 and creates no task", async () => {
      fx = await start();
      await expectRpcError(callToolAsTask(fx.client, "echo", { text: "hi" }), -32601, /echo.*forbidden/);
      expect(await listAllTasks(fx.client)).toEqual([]);
    });

    it("T-TOOL-2: a forbidden tool called as a task does not run", async () => {
      let probe!: ReturnType<typeof probeTool>;
      fx = await start({ setup: (app) => (probe = probeTool(app, "probe", { taskSupport: "forbidden" })) });
      await expectRpcError(callToolAsTask(fx.client, "probe", {}), -32601);
      // Run a task through the engine afterwards: had the refused call been scheduled, it would have run by now.
      const after = await callToolAsTask(fx.client, "sleep", { ms: 0 });
      await taskResult(fx.client, after.task.taskId);
      expect(probe.calls).toBe(0);
    });

    it("T-TOOL-2: a forbidden tool still works as a plain call", async () => {
      fx = await start();
      const result = await callTool(fx.client, "echo", { text: "hello" });
      expect(result.content).toEqual([{ type: "text", text: "hello" }]);
    });

    it("T-TOOL-3: an optional tool may be called as a normal request", async () => {
      fx = await start();
      const result = await callTool(fx.client, "sleep", { ms: 1 });
      expect(result.content).toEqual([{ type: "text", text: "slept 1 ms" }]);
      expect(result).not.toHaveProperty("task");
      expect(await listAllTasks(fx.client)).toEqual([]);
    });

    it("T-TOOL-3: an optional tool may be called as a task", async () => {
      fx = await start();
      const created = await callToolAsTask(fx.client, "sleep", { ms: 1 });
      expect(created.task.status).toBe("working");
      expect((await taskResult(fx.client, created.task.taskId)).content).toEqual([{ type: "text", text: "slept 1 ms" }]);
    });

    it("T-TOOL-4: a required tool called without a task is refused with -32601, not an isError result", async () => {
      fx = await start();
      await expectRpcError(callTool(fx.client, "batch", { ms: 1 }), -32601, /batch.*must be called as a task/);
      expect(await listAllTasks(fx.client)).toEqual([]);
    });

    it("T-TOOL-4: a required tool called without a task does not run", async () => {
      let probe!: ReturnType<typeof probeTool>;
      fx = await start({ setup: (app) => (probe = probeTool(app, "probe", { taskSupport: "required" })) });
      await expectRpcError(callTool(fx.client, "probe", {}), -32601);
      expect(probe.calls).toBe(0);
    });

    it("T-TOOL-4: a required tool called as a task runs", async () => {
      fx = await start();
      const created = await callToolAsTask(fx.client, "batch", { ms: 1 });
      expect((await taskResult(fx.client, created.task.taskId)).content).toEqual([{ type: "text", text: "slept 1 ms" }]);
    });
  });

  describe("T-NEW: creating a task", () => {
    it("T-NEW-1/T-NEW-2: a task-augmented request with a ttl gets a CreateTaskResult, not the tool's result", async () => {
      fx = await start();
      const raw = await fx.client.request(
        { method: "tools/call", params: { name: "sleep", arguments: { ms: 1 }, task: { ttl: 30_000 } } },
        AnyResultSchema,
      );
      expect(raw).toHaveProperty("task");
      expect(raw).not.toHaveProperty("content");
      expect(raw["task"]).toMatchObject({ status: "working", ttl: 30_000 });
    });

    it("T-NEW-1: params.task without a ttl is accepted", async () => {
      fx = await start();
      const created = await callToolAsTask(fx.client, "sleep", { ms: 1 }, {});
      expect(created.task.status).toBe("working");
      expect(typeof created.task.ttl).toBe("number");
    });

    it("T-NEW-2: the CreateTaskResult is a snapshot in working with ISO 8601 times, the actual ttl and a pollInterval", async () => {
      fx = await start({ pollIntervalMs: 250 });
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 1 }, { ttl: 45_000 });
      expect(task.status).toBe("working");
      expect(task.createdAt).toMatch(ISO_8601);
      expect(task.lastUpdatedAt).toMatch(ISO_8601);
      expect(task.ttl).toBe(45_000);
      expect(task.pollInterval).toBe(250);
    });

    it("T-NEW-2: the CreateTaskResult is returned as soon as the task is accepted, while the work is still running", async () => {
      let probe!: ReturnType<typeof probeTool>;
      fx = await start({ setup: (app) => (probe = probeTool(app, "probe")) });
      const created = await callToolAsTask(fx.client, "probe", {});
      expect(created.task.status).toBe("working");
      await probe.started;
      const result = track(taskResult(fx.client, created.task.taskId));
      expect((await getTask(fx.client, created.task.taskId)).status).toBe("working");
      expect(result.settled()).toBe(false);
      probe.finish();
      expect((await result.promise).content).toEqual([{ type: "text", text: "done" }]);
    });

    it("T-NEW-3: a tools/call task may carry a model-immediate-response string in _meta", async () => {
      fx = await start();
      const created = await callToolAsTask(fx.client, "sleep", { ms: 5 });
      expect(created._meta?.[MODEL_IMMEDIATE_RESPONSE]).toBe("Sleeping for 5 ms; the result will follow.");
    });

    it("T-NEW-3: a tool that defines no immediate response gets no model-immediate-response _meta", async () => {
      fx = await start();
      const created = await callToolAsTask(fx.client, "fail", { message: "x" });
      expect(created._meta?.[MODEL_IMMEDIATE_RESPONSE]).toBeUndefined();
    });

    it("T-NEW-4: with tasks switched off the server declares no tasks capability", async () => {
      fx = await start({ tasks: false });
      expect(fx.client.getServerCapabilities()?.tasks).toBeUndefined();
      const { tools } = await fx.client.request({ method: "tools/list", params: {} }, ListToolsResultSchema);
      expect(tools.every((t) => t.execution === undefined)).toBe(true);
    });

    it("T-NEW-4: with tasks switched off params.task is ignored and the call runs normally", async () => {
      fx = await start({ tasks: false });
      const result = await fx.client.request(
        { method: "tools/call", params: { name: "sleep", arguments: { ms: 1 }, task: { ttl: 60_000 } } },
        CallToolResultSchema,
      );
      expect(result.content).toEqual([{ type: "text", text: "slept 1 ms" }]);
      expect(result).not.toHaveProperty("task");
    });

    it("T-NEW-4: with tasks switched off a tool that would require a task runs as a plain call", async () => {
      fx = await start({ tasks: false });
      const result = await callTool(fx.client, "batch", { ms: 1 });
      expect(result.content).toEqual([{ type: "text", text: "slept 1 ms" }]);
    });

    it("T-NEW-4: with tasks switched off the tasks/* methods are not served", async () => {
      fx = await start({ tasks: false });
      await expectRpcError(fx.client.request({ method: "tasks/list", params: {} }, AnyResultSchema), -32601);
      await expectRpcError(
        fx.client.request({ method: "tasks/get", params: { taskId: "00000000-0000-4000-8000-000000000000" } }, AnyResultSchema),
        -32601,
      );
    });
  });

  describe("T-ID: task ids", () => {
    it("T-ID-1: task ids are receiver-generated strings, unique across tasks", async () => {
      fx = await start();
      const ids = new Set<string>();
      for (let i = 0; i < 20; i++) {
        const { task } = await callToolAsTask(fx.client, "sleep", { ms: 0 });
        expect(typeof task.taskId).toBe("string");
        ids.add(task.taskId);
      }
      expect(ids.size).toBe(20);
    });

    it("T-ID-2: task ids carry 128 random bits after their creation-time prefix", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 0 });
      expect(task.taskId).toMatch(TASK_ID);
    });

    it("T-ID-1: a requestor cannot choose the task id", async () => {
      fx = await start();
      const chosen = "00000000-0000-4000-8000-000000000001";
      const raw = await fx.client.request(
        { method: "tools/call", params: { name: "sleep", arguments: { ms: 0 }, task: { ttl: 60_000, taskId: chosen } } },
        z.object({ task: z.object({ taskId: z.string() }) }),
      );
      expect(raw.task.taskId).not.toBe(chosen);
    });
  });
}
