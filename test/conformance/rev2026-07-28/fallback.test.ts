/**
 * The fallback for hosts without tasks under 2026-07-28 (docs/hosts/README.md): stateless
 * requests whose envelope lacks the tasks extension get plain CallToolResults (core behaviour,
 * X-CAP-10) and the task_* tools; a declaring client sees none of it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTasksExtServer, type TasksExtServer } from "../../support/tasks-ext-server.js";
import { statelessResult, statelessRpc } from "../../support/stateless-client.js";

let server: TasksExtServer;
beforeAll(async () => {
  server = await startTasksExtServer({ app: { backgroundAfterMs: 100, taskResultWaitMs: 10_000, fallbackRequired: true } });
});
afterAll(() => server.close());

const plain = { declare: false } as const;
const callPlain = (name: string, args: Record<string, unknown> = {}) =>
  statelessResult(server.url, "tools/call", { name, arguments: args }, plain);
const TASK_TOOLS = ["task_status", "task_result", "task_cancel", "task_list"];

describe("fallback for a 2026-07-28 client without the tasks extension", () => {
  it("lists the task tools to a request without the extension", async () => {
    const listed = await statelessResult(server.url, "tools/list", {}, plain);
    expect((listed["tools"] as Array<{ name: string }>).map((t) => t.name)).toEqual(expect.arrayContaining(TASK_TOOLS));
  });

  it("lists no task tools to a request that declares the extension", async () => {
    const listed = await statelessResult(server.url, "tools/list", {});
    expect((listed["tools"] as Array<{ name: string }>).map((t) => t.name).filter((n) => TASK_TOOLS.includes(n))).toEqual([]);
  });

  it("answers a quick call of an optional tool with its result, never a CreateTaskResult (X-CAP-5)", async () => {
    const result = await callPlain("wait_ms", { ms: 0 });
    expect(result).toMatchObject({ resultType: "complete", content: [{ type: "text", text: "waited 0 ms" }] });
  });

  it("answers a slow call with a complete result that names its task", async () => {
    const result = await callPlain("wait_ms", { ms: 60_000 });
    expect(result["resultType"]).toBe("complete");
    expect(result["structuredContent"]).toMatchObject({ taskId: expect.any(String), status: "working", pollWith: "task_result" });
  });

  it("gives the tool's result through task_result", async () => {
    const answer = await callPlain("wait_ms", { ms: 500 });
    const { taskId } = answer["structuredContent"] as { taskId: string };
    expect(await callPlain("task_result", { taskId })).toMatchObject({
      resultType: "complete",
      content: [{ type: "text", text: "waited 500 ms" }],
    });
  });

  it("with fallbackRequired, runs a required tool for a client without the extension instead of -32021", async () => {
    expect(await callPlain("count_required")).toMatchObject({ content: [{ type: "text", text: "counted" }] });
  });

  it("answers task_status of an unknown id with -32602", async () => {
    const { body } = await statelessRpc(server.url, "tools/call", { name: "task_status", arguments: { taskId: "no-such-task" } }, plain);
    expect(body.error?.code).toBe(-32602);
  });

  it("cancels a background task with task_cancel", async () => {
    const answer = await callPlain("wait_ms", { ms: 60_000 });
    const { taskId } = answer["structuredContent"] as { taskId: string };
    expect((await callPlain("task_cancel", { taskId }))["structuredContent"]).toMatchObject({ taskId, status: "cancelled" });
  });

  it("answers a task that asks a question with a background answer saying input_required, with the question", async () => {
    const answer = await callPlain("ask_optional");
    expect(answer["structuredContent"]).toMatchObject({ status: "input_required", questions: [expect.stringContaining("ok?")] });
  });

  it("still answers a declaring client's slow optional call with a CreateTaskResult", async () => {
    const created = await statelessResult(server.url, "tools/call", { name: "wait_ms", arguments: { ms: 60_000 } });
    expect(created["resultType"]).toBe("task");
  });
});
