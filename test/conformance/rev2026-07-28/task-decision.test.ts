/**
 * When a 2026-07-28 tools/call becomes a task: the server decides, by the
 * tool's taskSupport, the client's declaration on this request, and how soon an optional tool ends.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTasksExtServer, type TasksExtServer } from "../../support/tasks-ext-server.js";
import { isTerminal, pollTask, statelessResult } from "../../support/stateless-client.js";

let server: TasksExtServer;
beforeAll(async () => {
  server = await startTasksExtServer({ app: { inlineWaitMs: 300 } });
});
afterAll(() => server.close());

describe("taskSupport optional, declaring client", () => {
  it("answers inline with the CallToolResult when the handler ends within inlineWaitMs", async () => {
    const result = await statelessResult(server.url, "tools/call", { name: "wait_ms", arguments: { ms: 20 } });
    expect(result).toEqual({ resultType: "complete", content: [{ type: "text", text: "waited 20 ms" }] });
  });

  it("answers with the CreateTaskResult when the handler runs longer than inlineWaitMs, and the task completes", async () => {
    const created = await statelessResult(server.url, "tools/call", { name: "wait_ms", arguments: { ms: 1000 } });
    expect(created).toMatchObject({ resultType: "task", status: "working" });
    const task = await pollTask(server.url, String(created["taskId"]), isTerminal);
    expect(task["result"]).toMatchObject({ content: [{ text: "waited 1000 ms" }] });
  });

  it("answers with the task at once when the handler asks for input within inlineWaitMs", async () => {
    const started = Date.now();
    const created = await statelessResult(server.url, "tools/call", { name: "ask_optional", arguments: {} });
    expect(created).toMatchObject({ resultType: "task", status: "input_required" });
    expect(Date.now() - started).toBeLessThan(300);
    await statelessResult(server.url, "tasks/cancel", { taskId: created["taskId"] });
  });

  it("always answers with the task when inlineWaitMs is 0", async () => {
    const eager = await startTasksExtServer({ app: { inlineWaitMs: 0 } });
    try {
      const created = await statelessResult(eager.url, "tools/call", { name: "slow_compute", arguments: { seconds: 0, label: "eager" } });
      expect(created["resultType"]).toBe("task");
    } finally {
      await eager.close();
    }
  });
});

describe("taskSupport optional, non-declaring client (X-CAP-5, X-CAP-10)", () => {
  it("runs the tool synchronously however long it takes: the CallToolResult, no taskId", async () => {
    const result = await statelessResult(server.url, "tools/call", { name: "wait_ms", arguments: { ms: 600 } }, { declare: false });
    expect(result).toEqual({ resultType: "complete", content: [{ type: "text", text: "waited 600 ms" }] });
  });
});

describe("taskSupport required and forbidden", () => {
  it("required: a task even when the handler would end at once", async () => {
    const created = await statelessResult(server.url, "tools/call", { name: "count_required", arguments: {} });
    expect(created["resultType"]).toBe("task");
  });

  it("forbidden: never a task, even for a declaring client and a slow handler (X-RT-6)", async () => {
    const result = await statelessResult(server.url, "tools/call", { name: "wait_forbidden", arguments: { ms: 600 } });
    expect(result).toEqual({ resultType: "complete", content: [{ type: "text", text: "waited 600 ms plainly" }] });
  });

  it("with task support off, a required tool runs as a plain call (no extension, no tasks)", async () => {
    const off = await startTasksExtServer({ app: { tasks: false } });
    try {
      const result = await statelessResult(off.url, "tools/call", { name: "count_required", arguments: {} });
      expect(result).toEqual({ resultType: "complete", content: [{ type: "text", text: "counted" }] });
    } finally {
      await off.close();
    }
  });
});
