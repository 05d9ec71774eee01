/**
 * The fallback for hosts without tasks (docs/hosts/README.md), 2025-11-25 sessions: a real
 * SDK Client that declares no `tasks` capability, over the in-memory transport and real HTTP.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, ElicitRequestSchema, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { inMemoryFixture, type Fixture } from "../../support/in-memory-fixture.js";
import { startTwoPrincipals, type TwoPrincipals } from "../../support/two-principals.js";

const NO_TASKS = { elicitation: { form: {} }, sampling: {} };
const WITH_TASKS = { ...NO_TASKS, tasks: { list: {}, cancel: {}, requests: { elicitation: { create: {} } } } };
const TASK_TOOLS = ["task_status", "task_result", "task_cancel", "task_list"];

let fx: Fixture | undefined;
let two: TwoPrincipals | undefined;
afterEach(async () => {
  await fx?.close();
  await two?.close();
  fx = undefined;
  two = undefined;
});

const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args }, CallToolResultSchema) as Promise<CallToolResult>;
const structured = (result: CallToolResult) => result.structuredContent as Record<string, unknown>;
const textOf = (result: CallToolResult) => (result.content[0] as { text: string }).text;

async function rpcErrorOf(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof McpError)) throw new Error(`expected a JSON-RPC error, got ${String(error)}`);
  return error;
}

/** A slow call answered in the background: its task id. */
async function backgrounded(client: Client, ms: number): Promise<string> {
  const answer = await call(client, "sleep", { ms });
  expect(structured(answer)).toMatchObject({ status: "working", pollWith: "task_result" });
  return String(structured(answer)["taskId"]);
}

describe("fallback for a client without tasks (2025-11-25, in memory)", () => {
  it("lists task_status, task_result, task_cancel and task_list to a client that declared no tasks capability", async () => {
    fx = await inMemoryFixture({}, NO_TASKS);
    const names = (await fx.client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(TASK_TOOLS));
  });

  it("lists no task tools to a client that declared the tasks capability", async () => {
    fx = await inMemoryFixture({}, WITH_TASKS);
    const names = (await fx.client.listTools()).tools.map((t) => t.name);
    expect(names.filter((n) => TASK_TOOLS.includes(n))).toEqual([]);
  });

  it("still refuses a plain call of a required tool from a client that declared tasks (T-TOOL-4)", async () => {
    fx = await inMemoryFixture({}, WITH_TASKS);
    const error = await rpcErrorOf(
      fx.client.request({ method: "tools/call", params: { name: "batch", arguments: { ms: 0 } } }, CallToolResultSchema),
    );
    expect(error.code).toBe(-32601);
  });

  it("answers a quick call of an optional tool with its ordinary result", async () => {
    fx = await inMemoryFixture({}, NO_TASKS);
    expect(textOf(await call(fx.client, "sleep", { ms: 0 }))).toBe("slept 0 ms");
  });

  it("runs the quick call as a stored task", async () => {
    fx = await inMemoryFixture({}, NO_TASKS);
    await call(fx.client, "sleep", { ms: 0 });
    const listed = await call(fx.client, "task_list");
    expect(structured(listed)["tasks"]).toEqual([expect.objectContaining({ tool: "sleep", status: "completed" })]);
  });

  it("answers a slow call with a background answer naming its task in text and structuredContent", async () => {
    fx = await inMemoryFixture({ backgroundAfterMs: 50 }, NO_TASKS);
    const answer = await call(fx.client, "sleep", { ms: 60_000 });
    const { taskId } = structured(answer);
    expect(answer.isError).toBeUndefined();
    expect(structured(answer)).toMatchObject({ taskId: expect.any(String), status: "working", pollWith: "task_result", tool: "sleep" });
    expect(textOf(answer)).toContain(String(taskId));
  });

  it("gives the tool's result through task_result once the background task ends", async () => {
    fx = await inMemoryFixture({ backgroundAfterMs: 50 }, NO_TASKS);
    const taskId = await backgrounded(fx.client, 400);
    expect(textOf(await call(fx.client, "task_result", { taskId }))).toBe("slept 400 ms");
  });

  it("answers task_result with the current status once its bounded wait is over", async () => {
    fx = await inMemoryFixture({ backgroundAfterMs: 50, taskResultWaitMs: 50 }, NO_TASKS);
    const taskId = await backgrounded(fx.client, 60_000);
    const answer = await call(fx.client, "task_result", { taskId });
    expect(answer.isError).toBeUndefined();
    expect(structured(answer)).toMatchObject({ taskId, status: "working", pollWith: "task_result" });
  });

  it("answers task_status with the task's status", async () => {
    fx = await inMemoryFixture({ backgroundAfterMs: 50 }, NO_TASKS);
    const taskId = await backgrounded(fx.client, 60_000);
    expect(structured(await call(fx.client, "task_status", { taskId }))).toMatchObject({ taskId, status: "working", tool: "sleep" });
  });

  it("cancels a background task with task_cancel", async () => {
    fx = await inMemoryFixture({ backgroundAfterMs: 50 }, NO_TASKS);
    const taskId = await backgrounded(fx.client, 60_000);
    expect(structured(await call(fx.client, "task_cancel", { taskId }))).toMatchObject({ taskId, status: "cancelled" });
    expect(structured(await call(fx.client, "task_status", { taskId }))["status"]).toBe("cancelled");
  });

  it("answers task_cancel of an ended task with a tool error", async () => {
    fx = await inMemoryFixture({}, NO_TASKS);
    await call(fx.client, "sleep", { ms: 0 });
    const [task] = structured(await call(fx.client, "task_list"))["tasks"] as Array<{ taskId: string }>;
    const answer = await call(fx.client, "task_cancel", { taskId: task!.taskId });
    expect(answer.isError).toBe(true);
  });

  it("lists the background task with task_list", async () => {
    fx = await inMemoryFixture({ backgroundAfterMs: 50 }, NO_TASKS);
    const taskId = await backgrounded(fx.client, 60_000);
    expect(structured(await call(fx.client, "task_list"))["tasks"]).toEqual([expect.objectContaining({ taskId, status: "working" })]);
  });

  it("answers an unknown task id with -32602, as tasks/get does", async () => {
    fx = await inMemoryFixture({}, NO_TASKS);
    const error = await rpcErrorOf(call(fx.client, "task_status", { taskId: "no-such-task" }));
    expect(error.code).toBe(-32602);
  });

  it("answers task_result without a taskId with -32602", async () => {
    fx = await inMemoryFixture({}, NO_TASKS);
    expect((await rpcErrorOf(call(fx.client, "task_result", {}))).code).toBe(-32602);
  });

  it("by default still refuses a plain call of a required tool with -32601 (T-TOOL-4), even from a client that declared no tasks", async () => {
    fx = await inMemoryFixture({}, NO_TASKS);
    const error = await rpcErrorOf(
      fx.client.request({ method: "tools/call", params: { name: "batch", arguments: { ms: 0 } } }, CallToolResultSchema),
    );
    expect(error.code).toBe(-32601);
  });

  it("with fallbackRequired, makes a required tool usable by a plain call", async () => {
    fx = await inMemoryFixture({ fallbackRequired: true }, NO_TASKS);
    // A raw request: the SDK's callTool refuses, client-side, a tool it saw listed as "required".
    const result = await fx.client.request({ method: "tools/call", params: { name: "batch", arguments: { ms: 0 } } }, CallToolResultSchema);
    expect(textOf(result)).toBe("slept 0 ms");
  });

  it("replays the JSON-RPC error a quick task ended with, as a plain call would", async () => {
    fx = await inMemoryFixture({}, NO_TASKS);
    const error = await rpcErrorOf(call(fx.client, "throw", { code: -32042, message: "nope" }));
    expect(error.code).toBe(-32042);
  });

  it("sends keep-alive progress to a waiting call that sent a progressToken", async () => {
    fx = await inMemoryFixture({ backgroundAfterMs: 5_000, keepAliveMs: 20 }, NO_TASKS);
    const progress: Array<{ progress: number; message?: string }> = [];
    await fx.client.callTool({ name: "sleep", arguments: { ms: 300 } }, CallToolResultSchema, { onprogress: (p) => void progress.push(p) });
    expect(progress[0]).toMatchObject({ progress: 1, message: expect.stringContaining("Still running") });
  });

  it("relays the task's own progress to the waiting call", async () => {
    fx = await inMemoryFixture({ backgroundAfterMs: 5_000, keepAliveMs: 60_000 }, NO_TASKS);
    const progress: Array<{ progress: number; total?: number }> = [];
    await fx.client.callTool({ name: "sleep", arguments: { ms: 200, steps: 2 } }, CallToolResultSchema, {
      onprogress: (p) => void progress.push(p),
    });
    expect(progress.at(-1)).toMatchObject({ progress: 2, total: 2 });
  });

  it("relays a task's question on the call's own stream to a client that declared elicitation", async () => {
    fx = await inMemoryFixture({ backgroundAfterMs: 5_000 }, NO_TASKS);
    fx.client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { answer: "blue" } }));
    expect(textOf(await call(fx.client, "ask", { question: "colour?" }))).toBe("answer: blue");
  });

  it("answers a relayed question's answer that does not fit it with the task's id and why, the question still open; the next answer through task_result ends the task", async () => {
    fx = await inMemoryFixture({ backgroundAfterMs: 5_000 }, NO_TASKS);
    let answers = 0;
    fx.client.setRequestHandler(ElicitRequestSchema, async () =>
      ++answers === 1 ? { action: "accept", content: { answer: 5 } } : { action: "accept", content: { answer: "blue" } },
    );
    const answer = await call(fx.client, "ask", { question: "colour?" });
    expect(structured(answer)).toMatchObject({ status: "input_required", pollWith: "task_result" });
    expect(textOf(answer)).toMatch(/Your answer to its question was not taken \(.*answer.*\); the question is still open/);
    const taskId = String(structured(answer)["taskId"]);
    expect(textOf(await call(fx.client, "task_result", { taskId }))).toBe("answer: blue");
    expect(answers).toBe(2);
  });

  it("cancels the task of a plain call the client gave up", async () => {
    fx = await inMemoryFixture({ backgroundAfterMs: 60_000 }, NO_TASKS);
    const abort = new AbortController();
    const pending = fx.client.callTool({ name: "sleep", arguments: { ms: 60_000 } }, CallToolResultSchema, { signal: abort.signal });
    await new Promise((resolve) => setTimeout(resolve, 100));
    abort.abort("gave up");
    await pending.catch(() => {});
    const deadline = Date.now() + 5_000;
    let status = "";
    while (Date.now() < deadline && status !== "cancelled") {
      const [task] = structured(await call(fx.client, "task_list"))["tasks"] as Array<{ status: string }>;
      status = task?.status ?? "";
      if (status !== "cancelled") await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(status).toBe("cancelled");
  });

  it("lets a user's tool named task_status win over ours", async () => {
    fx = await inMemoryFixture(
      { setup: (app) => app.tool("task_status", { input: z.object({}) }, async () => ({ content: [{ type: "text", text: "mine" }] })) },
      NO_TASKS,
    );
    const names = (await fx.client.listTools()).tools.map((t) => t.name);
    expect(names.filter((n) => n === "task_status")).toHaveLength(1);
    expect(textOf(await call(fx.client, "task_status"))).toBe("mine");
  });

  it("serves a slow call plainly, as before, with backgroundAfterMs null", async () => {
    fx = await inMemoryFixture({ backgroundAfterMs: null }, NO_TASKS);
    const names = (await fx.client.listTools()).tools.map((t) => t.name);
    expect(names.filter((n) => TASK_TOOLS.includes(n))).toEqual([]);
    expect(textOf(await call(fx.client, "sleep", { ms: 200 }))).toBe("slept 200 ms");
  });
});

describe("fallback over Streamable HTTP with two principals", () => {
  it("gives alice the result of her background task through task_result", async () => {
    two = await startTwoPrincipals({ app: { backgroundAfterMs: 50 } });
    const taskId = await backgrounded(two.alice.client, 400);
    expect(textOf(await call(two.alice.client, "task_result", { taskId }))).toBe("slept 400 ms");
  });

  it("answers mallory's task_status of alice's task with -32602, as for an unknown id (T-SEC-3)", async () => {
    two = await startTwoPrincipals({ app: { backgroundAfterMs: 50 } });
    const taskId = await backgrounded(two.alice.client, 60_000);
    const error = await rpcErrorOf(call(two.mallory.client, "task_status", { taskId }));
    expect(error.code).toBe(-32602);
  });

  it("does not let mallory cancel alice's task", async () => {
    two = await startTwoPrincipals({ app: { backgroundAfterMs: 50 } });
    const taskId = await backgrounded(two.alice.client, 60_000);
    await rpcErrorOf(call(two.mallory.client, "task_cancel", { taskId }));
    expect(structured(await call(two.alice.client, "task_status", { taskId }))["status"]).toBe("working");
  });

  it("lists only the caller's own tasks in task_list", async () => {
    two = await startTwoPrincipals({ app: { backgroundAfterMs: 50 } });
    await backgrounded(two.alice.client, 60_000);
    expect(structured(await call(two.mallory.client, "task_list"))["tasks"]).toEqual([]);
  });
});
