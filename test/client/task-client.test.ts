import { CreateTaskResultSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it, vi } from "vitest";
import { memoryJournal } from "../../src/client/task-journal.js";
import { RemoteError, TaskCancelledError } from "../../src/mcp/requestor/requestor-errors.js";
import { captureLogger, probeTool, type Probe } from "../support/conformance.js";
import { taskClientFixture, type TaskClientFixture, type WireLog } from "../support/task-client-fixture.js";

const requests = (wire: WireLog, method: string) =>
  wire.sent.filter(
    (m): m is JSONRPCMessage & { method: string; id: number; params?: Record<string, unknown> } =>
      "method" in m && "id" in m && m.method === method,
  );

let fx: TaskClientFixture | null = null;
afterEach(async () => {
  vi.useRealTimers();
  await fx?.close();
  fx = null;
});

describe("TaskClient — when to call a tool as a task (T-CAP-3, T-TOOL)", () => {
  it("T-TOOL-1: never task-augments a call when the server lacks tasks.requests.tools.call", async () => {
    fx = await taskClientFixture({}, { tasks: false });
    const call = await fx.tasks.callTool("sleep", { ms: 1 });
    expect(call.kind).toBe("result");
    expect(requests(fx.wire, "tools/call").every((m) => m.params?.["task"] === undefined)).toBe(true);
  });

  it("T-CAP-3: an explicit task wish against a server without task support is refused before anything is sent", async () => {
    fx = await taskClientFixture({}, { tasks: false });
    await expect(fx.tasks.callTool("sleep", { ms: 1 }, { task: true })).rejects.toMatchObject({ code: -32601 });
    expect(requests(fx.wire, "tools/call")).toHaveLength(0);
  });

  it('T-TOOL-2: a "forbidden" tool is called plainly, and a task wish for it is refused locally', async () => {
    fx = await taskClientFixture();
    const call = await fx.tasks.callTool("echo", { text: "hi" });
    expect(call).toMatchObject({ kind: "result", result: { content: [{ type: "text", text: "hi" }] } });
    await expect(fx.tasks.callTool("echo", { text: "hi" }, { task: true })).rejects.toMatchObject({ code: -32601 });
    expect(requests(fx.wire, "tools/call").every((m) => m.params?.["task"] === undefined)).toBe(true);
  });

  it('T-TOOL-3: an "optional" tool is plain by default and a task when asked', async () => {
    fx = await taskClientFixture();
    expect((await fx.tasks.callTool("sleep", { ms: 1 })).kind).toBe("result");
    const call = await fx.tasks.callTool("sleep", { ms: 1 }, { task: true, ttl: 60_000 });
    expect(call.kind).toBe("task");
    expect(requests(fx.wire, "tools/call").at(-1)?.params?.["task"]).toEqual({ ttl: 60_000 });
  });

  it('T-TOOL-4: a "required" tool is always called as a task; a plain wish is refused locally', async () => {
    fx = await taskClientFixture();
    const call = await fx.tasks.callTool("batch", { ms: 1 });
    expect(call.kind).toBe("task");
    await expect(fx.tasks.callTool("batch", { ms: 1 }, { task: false })).rejects.toMatchObject({ code: -32601 });
  });

  it("T-NEW-3: the model-immediate-response of the CreateTaskResult is handed to the caller", async () => {
    fx = await taskClientFixture();
    const call = await fx.tasks.callTool("sleep", { ms: 1 }, { task: true });
    expect(call).toMatchObject({ kind: "task", immediateResponse: "Sleeping for 1 ms; the result will follow." });
  });
});

describe("TaskClient — following a task (T-GET, T-NOTE, T-INPUT)", () => {
  it("T-GET-2: updates() polls tasks/get no faster than the task's pollInterval and ends at the terminal status", async () => {
    fx = await taskClientFixture({}, { pollIntervalMs: 200 });
    const call = await fx.tasks.callTool("sleep", { ms: 700 }, { task: true });
    if (call.kind !== "task") throw new Error("expected a task");
    const seen: string[] = [];
    for await (const task of call.task.updates()) seen.push(task.status);
    expect(seen).toEqual(["working", "completed"]);
    const polls = requests(fx.wire, "tasks/get");
    expect(polls.length).toBeGreaterThanOrEqual(2);
    expect(polls.length).toBeLessThanOrEqual(6); // 700 ms at one poll per 200 ms, plus the first and the last
  });

  it("T-NOTE-2: a requestor that hears no notifications/tasks/status still sees the task end (it polls)", async () => {
    fx = await taskClientFixture({}, { pollIntervalMs: 50 });
    const call = await fx.tasks.callTool("sleep", { ms: 200 }, { task: true });
    if (call.kind !== "task") throw new Error("expected a task");
    // A second session did not create the task: the server sends it no status notifications.
    const other = await fx.connectAnother();
    const handle = await other.tasks.resume(call.task.id);
    const statuses: string[] = [];
    for await (const task of handle.updates()) statuses.push(task.status);
    expect(statuses.at(-1)).toBe("completed");
    expect(other.wire.received.some((m) => "method" in m && m.method === "notifications/tasks/status")).toBe(false);
  });

  it("T-INPUT-3: on input_required it calls tasks/result at once and the elicitation reaches the app's handler with the related task id", async () => {
    const seen: { relatedTaskId: string | null; message: string }[] = [];
    fx = await taskClientFixture({
      elicit: async (params, info) => {
        seen.push({ relatedTaskId: info.relatedTaskId, message: params.message });
        return { action: "accept", content: { answer: "blue" } };
      },
    });
    const call = await fx.tasks.callTool("ask", { question: "Colour?" }, { task: true });
    if (call.kind !== "task") throw new Error("expected a task");
    // Only follow the status: the client must take the question by itself.
    const statuses: string[] = [];
    for await (const task of call.task.updates()) statuses.push(task.status);
    expect(statuses).toContain("completed");
    expect(seen).toEqual([{ relatedTaskId: call.task.id, message: "Colour?" }]);
    expect(requests(fx.wire, "tasks/result").length).toBeGreaterThanOrEqual(1);
    expect(await call.task.result()).toMatchObject({ content: [{ type: "text", text: "answer: blue" }] });
  });

  it("T-PROG-1: progress of a task keeps reaching the caller after the CreateTaskResult", async () => {
    fx = await taskClientFixture();
    const progress: number[] = [];
    const call = await fx.tasks.callTool("sleep", { ms: 90, steps: 3 }, { task: true, onProgress: (p) => progress.push(p.progress) });
    if (call.kind !== "task") throw new Error("expected a task");
    await call.task.result();
    await vi.waitFor(() => expect(progress).toEqual([1, 2, 3]));
  });
});

describe("TaskClient — outcomes (T-RES, T-LIFE-4, T-CANCEL)", () => {
  it("T-LIFE-4: a failed tool task yields its CallToolResult with isError, not a generic failure", async () => {
    fx = await taskClientFixture();
    const call = await fx.tasks.callTool("fail", { message: "disk full" }, { task: true });
    if (call.kind !== "task") throw new Error("expected a task");
    const outcome = await call.task.outcome();
    expect(outcome).toMatchObject({ status: "failed", result: { isError: true, content: [{ type: "text", text: "disk full" }] } });
  });

  it("T-RES-4: a task that ended in a JSON-RPC error rejects with a RemoteError carrying the replayed code and message", async () => {
    fx = await taskClientFixture();
    const call = await fx.tasks.callTool("throw", { code: -32042, message: "quota exceeded" }, { task: true });
    if (call.kind !== "task") throw new Error("expected a task");
    const error = await call.task.result().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RemoteError);
    expect(error).toMatchObject({ code: -32042, message: "quota exceeded", taskId: call.task.id });
    expect(await call.task.outcome()).toMatchObject({ status: "failed", error: { code: -32042 } });
  });

  it("T-CANCEL-1: cancel() answers the task in cancelled; result() then rejects with TaskCancelledError", async () => {
    fx = await taskClientFixture();
    const call = await fx.tasks.callTool("sleep", { ms: 60_000 }, { task: true });
    if (call.kind !== "task") throw new Error("expected a task");
    const cancelled = await call.task.cancel();
    expect(cancelled.status).toBe("cancelled");
    await expect(call.task.result()).rejects.toBeInstanceOf(TaskCancelledError);
  });

  it("T-CANCEL-2: cancelling a terminal task rejects with the server's -32602", async () => {
    fx = await taskClientFixture();
    const call = await fx.tasks.callTool("sleep", { ms: 1 }, { task: true });
    if (call.kind !== "task") throw new Error("expected a task");
    await call.task.result();
    await expect(call.task.cancel()).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("terminal status 'completed'"),
    });
  });

  it("T-RES-3: result() has no client-side 60 s cut-off (the caller's signal is the limit)", async () => {
    let probe!: Probe;
    fx = await taskClientFixture({}, { setup: (app) => (probe = probeTool(app, "probe")) });
    const call = await fx.tasks.callTool("probe", {}, { task: true });
    if (call.kind !== "task") throw new Error("expected a task");
    await probe.started;
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    let settled = false;
    const result = call.task.result().finally(() => (settled = true));
    try {
      await vi.advanceTimersByTimeAsync(10 * 60_000);
      expect(settled).toBe(false);
    } finally {
      vi.useRealTimers(); // unit files share their worker: fake timers must not outlive this test
    }
    probe.finish();
    expect(await result).toMatchObject({ content: [{ type: "text", text: "done" }] });
  });

  it("result() with an aborted signal rejects with the caller's reason and leaves the task running", async () => {
    fx = await taskClientFixture();
    const call = await fx.tasks.callTool("sleep", { ms: 60_000 }, { task: true });
    if (call.kind !== "task") throw new Error("expected a task");
    const controller = new AbortController();
    const pending = call.task.result({ signal: controller.signal });
    controller.abort(new Error("enough"));
    await expect(pending).rejects.toThrow("enough");
    expect((await call.task.status()).status).toBe("working");
  });
});

describe("TaskClient — listing, resuming, lifecycle log (T-LIST-3, T-SEC-5)", () => {
  it("T-LIST-3: list() walks every page, sending back the server's cursors untouched", async () => {
    fx = await taskClientFixture({}, { pageSize: 2 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const call = await fx.tasks.callTool("sleep", { ms: 1 }, { task: true });
      if (call.kind === "task") ids.push(call.task.id);
    }
    const listed: string[] = [];
    for await (const task of fx.tasks.list()) listed.push(task.taskId);
    expect(listed.sort()).toEqual([...ids].sort());
    const cursorsSent = requests(fx.wire, "tasks/list")
      .map((m) => m.params?.["cursor"])
      .filter((c) => c !== undefined);
    const cursorsReceived = fx.wire.received.flatMap((m) =>
      "result" in m && typeof m.result["nextCursor"] === "string" ? [m.result["nextCursor"]] : [],
    );
    expect(cursorsSent).toEqual(cursorsReceived);
    expect(cursorsSent).toHaveLength(2);
  });

  it("resume(): a new session re-attaches to a task by id and collects its result", async () => {
    fx = await taskClientFixture();
    const call = await fx.tasks.callTool("sleep", { ms: 50 }, { task: true });
    if (call.kind !== "task") throw new Error("expected a task");
    const later = await fx.connectAnother();
    const handle = await later.tasks.resume(call.task.id);
    expect(await handle.result()).toMatchObject({ content: [{ type: "text", text: "slept 50 ms" }] });
  });

  it("resume() of an unknown id rejects with the server's -32602", async () => {
    fx = await taskClientFixture();
    await expect(fx.tasks.resume("no-such-task")).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("Task not found"),
    });
  });

  it("T-SEC-5 (requestor): task creation, status changes, result and cancel are logged and journaled with the task id", async () => {
    const logger = captureLogger();
    const journal = memoryJournal();
    fx = await taskClientFixture({ logger, journal, target: "in-memory" });
    const call = await fx.tasks.callTool("sleep", { ms: 1 }, { task: true });
    if (call.kind !== "task") throw new Error("expected a task");
    await call.task.result();
    const second = await fx.tasks.callTool("sleep", { ms: 60_000 }, { task: true });
    if (second.kind !== "task") throw new Error("expected a task");
    await second.task.cancel();
    const ops = (await journal.entries()).map((e) => `${e.op}:${e.taskId === call.task.id ? "1" : "2"}`);
    expect(ops).toEqual(expect.arrayContaining(["created:1", "status:1", "result:1", "created:2", "cancel:2"]));
    expect((await journal.entries()).every((e) => e.target === "in-memory")).toBe(true);
    expect(logger.entries.some((e) => e.obj["requestor"] === "created" && e.obj["taskId"] === call.task.id)).toBe(true);
  });
});

describe("TaskClient — one-off looks do not take a task's questions", () => {
  it("get() of an input_required task does not call tasks/result (the question stays for whoever follows the task)", async () => {
    let asked = 0;
    fx = await taskClientFixture({
      elicit: async () => {
        asked++;
        return { action: "accept", content: { answer: "x" } };
      },
    });
    // Another requestor creates the task and does not follow it.
    const other = await fx.connectAnother({ elicit: async () => ({ action: "decline" }) });
    const call = await other.client.request(
      { method: "tools/call", params: { name: "ask", arguments: { question: "?" }, task: {} } },
      CreateTaskResultSchema,
    );
    await vi.waitFor(async () => expect((await fx!.tasks.get(call.task.taskId)).status).toBe("input_required"));
    expect(requests(fx.wire, "tasks/result")).toHaveLength(0);
    expect(asked).toBe(0);
  });
});
