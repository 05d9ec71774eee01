/**
 * What withTasks gives the SDK app of fixtures/app.ts, one behaviour per test, driven by the
 * official SDK Client over whichever transport and store `connect` sets up.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  GetPromptResultSchema,
  ListToolsResultSchema,
  ReadResourceResultSchema,
  type Progress,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  callTool,
  callToolAsTask,
  cancelTask,
  expectRpcError,
  getTask,
  RELATED_TASK,
  taskResult,
  watchStatuses,
} from "../support/conformance.js";
import { Recorder } from "../support/recorder.js";

export interface Connected {
  client: Client;
  close(): Promise<void>;
}

/**
 * The client capabilities every test declares: it answers elicitation (form), and it is a
 * task-aware requestor (`capabilities.tasks`), so it gets the spec's behaviour rather than the
 * fallback for hosts without tasks (that one: fallback.test.ts).
 */
export const CLIENT_CAPABILITIES = { elicitation: { form: {} }, tasks: {} };

/** Calls the app's plain `aborted` tool until it lists `taskId` (its callback saw the abort). */
async function waitUntilAborted(client: Client, taskId: string): Promise<string[]> {
  for (;;) {
    const result = await callTool(client, "aborted", {});
    const ids = JSON.parse((result.content[0] as { text: string }).text) as string[];
    if (ids.includes(taskId)) return ids;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function waitForStatus(client: Client, taskId: string, status: string): Promise<void> {
  for (;;) {
    if ((await getTask(client, taskId)).status === status) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The behaviours, on one connection (and server) for all of them: each test makes tasks of its own. */
export function sdkServerBehaviours(connect: () => Promise<Connected>): void {
  let open: Connected | undefined;
  // A process started through tsx on a loaded machine can take a while.
  beforeAll(async () => {
    open = await connect();
  }, 60_000);
  afterAll(async () => {
    await open?.close();
    open = undefined;
  });
  const client = async (): Promise<Client> => {
    if (!open) throw new Error("not connected");
    return open.client;
  };

  it("declares the tasks capability beside the SDK's own (T-CAP-1/2)", async () => {
    const c = await client();
    expect(c.getServerCapabilities()).toMatchObject({
      tools: {},
      resources: {},
      prompts: {},
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    });
  });

  it("serves the SDK resource unchanged", async () => {
    const c = await client();
    const read = await c.request({ method: "resources/read", params: { uri: "note://greeting" } }, ReadResourceResultSchema);
    expect(read.contents).toEqual([{ uri: "note://greeting", mimeType: "text/plain", text: "hello from the SDK" }]);
  });

  it("serves the SDK prompt unchanged", async () => {
    const c = await client();
    const prompt = await c.request(
      { method: "prompts/get", params: { name: "review", arguments: { topic: "tasks" } } },
      GetPromptResultSchema,
    );
    expect(prompt.messages).toEqual([{ role: "user", content: { type: "text", text: "Review tasks" } }]);
  });

  it("runs the plain tool as the SDK does", async () => {
    const c = await client();
    expect(await callTool(c, "echo", { message: "hi" })).toEqual({ content: [{ type: "text", text: "echo: hi" }] });
  });

  it("lists each marked tool with its taskSupport and every other tool as forbidden (T-TOOL-1)", async () => {
    const c = await client();
    const { tools } = await c.request({ method: "tools/list", params: {} }, ListToolsResultSchema);
    const support = Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]));
    expect(support).toEqual({
      echo: "forbidden",
      aborted: "forbidden",
      count: "optional",
      ask: "required",
      wait: "optional",
      whoami: "optional",
    });
  });

  it("answers a task-augmented call of a marked tool with a CreateTaskResult (T-NEW-2)", async () => {
    const c = await client();
    const created = await callToolAsTask(c, "count", { steps: 1 }, { ttl: 60_000 });
    expect(created.task).toMatchObject({ taskId: expect.any(String), status: "working", ttl: 60_000 });
  });

  it("answers tasks/result with the callback's result and related-task _meta (T-RES-5)", async () => {
    const c = await client();
    const { task } = await callToolAsTask(c, "count", { steps: 2 });
    const result = await taskResult(c, task.taskId);
    expect(result.content).toEqual([{ type: "text", text: "counted to 2" }]);
    expect(result._meta).toEqual({ [RELATED_TASK]: { taskId: task.taskId } });
    expect((await getTask(c, task.taskId)).status).toBe("completed");
  });

  it("carries the callback's progress to the requestor with the call's progress token (T-PROG-1)", async () => {
    const c = await client();
    const progress = new Recorder<Progress>();
    const { task } = await callToolAsTask(c, "count", { steps: 3 }, {}, { onprogress: (p) => progress.push(p) });
    await progress.waitFor((p) => p.progress === 3, "the last progress step");
    expect(progress.items.map((p) => [p.progress, p.total])).toEqual([
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    await taskResult(c, task.taskId);
  });

  it("makes the callback's elicitation the task's input_required question, answered through tasks/result (T-INPUT)", async () => {
    const c = await client();
    const asked = new Recorder<{ message: string; related: unknown }>();
    c.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push({ message: request.params.message, related: request.params._meta?.[RELATED_TASK] });
      return { action: "accept", content: { answer: "42" } };
    });
    const { task } = await callToolAsTask(c, "ask", { question: "What is the answer?" });
    await waitForStatus(c, task.taskId, "input_required");
    const result = await taskResult(c, task.taskId);
    expect(result.content).toEqual([{ type: "text", text: "answer: 42" }]);
    expect(asked.items).toEqual([{ message: "What is the answer?", related: { taskId: task.taskId } }]);
  });

  it("aborts the callback's extra.signal on tasks/cancel (T-CANCEL-3)", async () => {
    const c = await client();
    const started = new Recorder<Progress>();
    const { task } = await callToolAsTask(c, "wait", {}, {}, { onprogress: (p) => started.push(p) });
    await started.waitFor(() => true, "the callback to start");
    expect((await cancelTask(c, task.taskId)).status).toBe("cancelled");
    await waitUntilAborted(c, task.taskId);
    await expectRpcError(taskResult(c, task.taskId), -32800);
  });

  it("sends notifications/tasks/status to the session that created the task (T-NOTE-1)", async () => {
    const c = await client();
    const statuses = watchStatuses(c);
    const started = new Recorder<Progress>();
    const { task } = await callToolAsTask(c, "wait", {}, {}, { onprogress: (p) => started.push(p) });
    // The progress came on the session's own stream, which the status will take too.
    await started.waitFor(() => true, "the callback to start");
    await cancelTask(c, task.taskId);
    const notified = await statuses.until(task.taskId, "cancelled");
    expect(notified).toMatchObject({
      taskId: task.taskId,
      status: "cancelled",
      createdAt: expect.any(String),
      lastUpdatedAt: expect.any(String),
    });
  });

  it("runs an unmarked tool called with params.task plainly, its task metadata ignored (T-NEW-4)", async () => {
    const c = await client();
    const result = await c.request(
      { method: "tools/call", params: { name: "echo", arguments: { message: "plain" }, task: {} } },
      CallToolResultSchema,
    );
    expect(result).toEqual({ content: [{ type: "text", text: "echo: plain" }] });
  });

  it("runs an optional tool called without params.task as the SDK does", async () => {
    const c = await client();
    expect(await callTool(c, "count", { steps: 2 })).toEqual({ content: [{ type: "text", text: "counted to 2" }] });
  });

  it("refuses a required tool called without params.task with -32601 (T-TOOL-4)", async () => {
    const c = await client();
    await expectRpcError(callTool(c, "ask", { question: "?" }), -32601);
  });

  it("refuses a task-augmented call whose arguments fail the tool's schema with -32602", async () => {
    const c = await client();
    await expectRpcError(callToolAsTask(c, "count", { steps: "three" }), -32602);
  });
}
