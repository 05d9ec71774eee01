/**
 * An answer to a task's form question is checked against the question's `requestedSchema` on
 * every path that delivers one — 2025-11-25 `tasks/result` stream responses (T-INPUT-3), the
 * 2026-07-28 `tasks/update` inputResponses (X-UPD-4), the fallback relay of a host without tasks,
 * and the web view — by one check in the engine's `respond`: an answer that does not fit is
 * refused with -32602 naming the field (on the fallback relay, whose host may know no tasks, in
 * the background answer that names the task), and the question stays open for a fitting one. One table
 * of cases, over both eras, against a real HTTP server (the official SDK client under 2025-11-25,
 * raw stateless requests under 2026-07-28).
 */
import { ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { AnyResultSchema, callToolAsTask } from "../support/conformance.js";
import { connectHttpClient, type HttpClient } from "../support/http-fixture.js";
import { isTerminal, pollTask, statelessResult, statelessRpc } from "../support/stateless-client.js";
import { startTasksExtServer, type TasksExtServer } from "../support/tasks-ext-server.js";

/** The form the tool asks for: every kind of field an elicitation form may hold. */
const FORM = {
  type: "object",
  properties: {
    confirm: { type: "boolean" },
    note: { type: "string", maxLength: 10 },
    email: { type: "string", format: "email" },
    when: { type: "string", format: "date" },
    count: { type: "integer", minimum: 1, maximum: 5 },
    colour: { type: "string", enum: ["red", "green"] },
    tags: { type: "array", items: { type: "string", enum: ["a", "b"] }, maxItems: 2 },
  },
  required: ["confirm"],
} as const;

const accept = (content: Record<string, unknown>) => ({ action: "accept", content });

/** Answers that do not fit FORM, and what the refusal's message must say. */
const INVALID: Array<[what: string, answer: Record<string, unknown>, message: RegExp]> = [
  ["a string for a boolean", accept({ confirm: "maybe" }), /Invalid field "confirm": expected true or false/],
  ["a required field left out", accept({ note: "hi" }), /Missing required field "confirm"/],
  ["a string over its maxLength", accept({ confirm: true, note: "far too long" }), /Invalid field "note": expected at most 10 characters/],
  ["a malformed email", accept({ confirm: true, email: "not-an-address" }), /Invalid field "email": expected an email address/],
  ["a malformed date", accept({ confirm: true, when: "31/12/2026" }), /Invalid field "when": expected a date/],
  ["an integer over its maximum", accept({ confirm: true, count: 7 }), /Invalid field "count": expected a number ≤ 5/],
  ["a fraction for an integer", accept({ confirm: true, count: 1.5 }), /Invalid field "count": expected a whole number/],
  ["a value outside the enum", accept({ confirm: true, colour: "blue" }), /Invalid field "colour": expected one of "red", "green"/],
  ["a choice outside the list", accept({ confirm: true, tags: ["a", "z"] }), /Invalid field "tags": expected values among "a", "b"/],
  ["a decline with content", { action: "decline", content: { confirm: true } }, /"decline" carries no content/],
];

/** Answers that fit, and what the tool then answers (the ElicitResult its handler received). */
const VALID: Array<[what: string, answer: Record<string, unknown>, received: Record<string, unknown>]> = [
  [
    "every field filled in",
    accept({ confirm: true, note: "ok", email: "ada@example.org", when: "2026-12-01", count: 5, colour: "green", tags: ["a", "b"] }),
    accept({ confirm: true, note: "ok", email: "ada@example.org", when: "2026-12-01", count: 5, colour: "green", tags: ["a", "b"] }),
  ],
  ["only the required field", accept({ confirm: false }), accept({ confirm: false })],
  [
    "a field the form does not declare besides (kept: JSON Schema allows further properties)",
    accept({ confirm: true, colur: "red" }),
    accept({ confirm: true, colur: "red" }),
  ],
  ["a decline", { action: "decline" }, { action: "decline" }],
  ["a cancel with an empty content (dropped)", { action: "cancel", content: {} }, { action: "cancel" }],
];

const FIX = accept({ confirm: true });

let server: TasksExtServer;
beforeAll(async () => {
  server = await startTasksExtServer();
  server.app.tool("form_question", { input: z.object({}), taskSupport: "required" }, async (_args, ctx) => {
    const answer = await ctx.elicit({ mode: "form", message: "Go on?", requestedSchema: FORM as never });
    return { content: [{ type: "text", text: JSON.stringify(answer) }] };
  });
  server.app.tool("form_question_plain", { input: z.object({}), taskSupport: "optional" }, async (_args, ctx) => {
    const answer = await ctx.elicit({ mode: "form", message: "Go on?", requestedSchema: FORM as never });
    return { content: [{ type: "text", text: JSON.stringify(answer) }] };
  });
});
afterAll(() => server.close());

/** One era's way to start the task and to answer its question. */
interface Era {
  /** Creates a form_question task and returns its id once its question is pending. */
  start(): Promise<string>;
  /** Delivers `answer` the era's way: null when accepted, else the JSON-RPC error. */
  answer(taskId: string, answer: Record<string, unknown>): Promise<{ code: number; message: string } | null>;
  /** The task's result text once it ended. */
  result(taskId: string): Promise<string>;
  close(): Promise<void>;
}

async function pendingQuestion(taskId: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if ((await server.app.engine.inspect.pendingInputs(taskId)).length > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`task ${taskId} asked nothing`);
}

/** 2025-11-25: the SDK client answers the elicitation that arrives on its tasks/result stream. */
async function era2025(): Promise<Era> {
  const connection: HttpClient = await connectHttpClient(server.url, {
    capabilities: { elicitation: { form: {} }, tasks: { requests: { elicitation: { create: {} } } } } as never,
  });
  let next: Record<string, unknown> = FIX;
  connection.client.setRequestHandler(ElicitRequestSchema, async () => next as ElicitResult);
  let last: Record<string, unknown> | null = null;
  return {
    async start() {
      const created = await callToolAsTask(connection.client, "form_question", {});
      await pendingQuestion(created.task.taskId);
      return created.task.taskId;
    },
    async answer(taskId, answer) {
      next = answer;
      try {
        last = await connection.client.request({ method: "tasks/result", params: { taskId } }, AnyResultSchema);
        return null;
      } catch (error) {
        const { code, message } = error as { code: number; message: string };
        return { code, message };
      }
    },
    async result() {
      return String((last?.["content"] as Array<{ text: string }> | undefined)?.[0]?.text);
    },
    close: () => connection.close(),
  };
}

/** 2026-07-28: the answer goes in a tasks/update's inputResponses, under the key tasks/get listed. */
async function era2026(): Promise<Era> {
  const keyOf = async (taskId: string): Promise<string> => {
    const task = await pollTask(server.url, taskId, (t) => t["status"] === "input_required" || isTerminal(t));
    return String(Object.keys((task["inputRequests"] as object | undefined) ?? {})[0]);
  };
  return {
    async start() {
      const created = await statelessResult(server.url, "tools/call", { name: "form_question", arguments: {} });
      const taskId = String(created["taskId"]);
      await keyOf(taskId);
      return taskId;
    },
    async answer(taskId, answer) {
      const key = await keyOf(taskId);
      const { body } = await statelessRpc(server.url, "tasks/update", { taskId, inputResponses: { [key]: answer } });
      return body.error ? { code: body.error.code, message: body.error.message } : null;
    },
    async result(taskId) {
      const done = await pollTask(server.url, taskId, isTerminal);
      return String((done["result"] as { content: Array<{ text: string }> }).content[0]?.text);
    },
    close: async () => {},
  };
}

describe.each([
  ["2025-11-25", era2025],
  ["2026-07-28", era2026],
])("answers to a form question under %s", (_era, open) => {
  let era: Era;
  beforeAll(async () => {
    era = await open();
  });
  afterAll(() => era.close());

  it.each(INVALID)(
    "%s is refused with -32602 naming the field, and the question stays open for a fitting answer",
    async (_what, answer, message) => {
      const taskId = await era.start();
      const refused = await era.answer(taskId, answer);
      expect(refused?.code).toBe(-32602);
      expect(refused?.message).toMatch(message);
      const [open] = await server.app.engine.inspect.pendingInputs(taskId);
      expect(open?.answer).toBeNull();
      expect((await server.app.engine.inspect.task(taskId))?.status).toBe("input_required");
      expect(await era.answer(taskId, FIX)).toBeNull();
      expect(JSON.parse(await era.result(taskId))).toEqual(FIX);
    },
  );

  it.each(VALID)("%s is recorded and reaches the handler as the form's answer", async (_what, answer, received) => {
    const taskId = await era.start();
    expect(await era.answer(taskId, answer)).toBeNull();
    expect(JSON.parse(await era.result(taskId))).toEqual(received);
  });
});

describe("the fallback relay (a 2025-11-25 host without tasks)", () => {
  let host: HttpClient;
  let next: Record<string, unknown> = FIX;
  beforeAll(async () => {
    host = await connectHttpClient(server.url, { capabilities: { elicitation: { form: {} } } });
    host.client.setRequestHandler(ElicitRequestSchema, async () => next as ElicitResult);
  });
  afterAll(() => host.close());

  it("does not take an answer that does not fit: the plain call answers in the background, naming the field and the task, whose question stays open for task_result", async () => {
    next = accept({ confirm: "maybe" });
    const answer = await host.client.callTool({ name: "form_question_plain", arguments: {} });
    const text = String((answer.content as Array<{ text: string }>)[0]?.text);
    expect(text).toMatch(
      /Your answer to its question was not taken \(.*Invalid field "confirm": expected true or false\); the question is still open/,
    );
    const taskId = String((answer.structuredContent as Record<string, unknown>)["taskId"]);
    expect((answer.structuredContent as Record<string, unknown>)["status"]).toBe("input_required");
    next = accept({ confirm: true });
    const result = await host.client.callTool({ name: "task_result", arguments: { taskId } });
    expect(JSON.parse(String((result.content as Array<{ text: string }>)[0]?.text))).toEqual(accept({ confirm: true }));
  });

  it("records an answer that fits: the plain call answers with the tool's result", async () => {
    next = accept({ confirm: true, count: 2 });
    const result = await host.client.callTool({ name: "form_question_plain", arguments: {} });
    expect(JSON.parse(String((result.content as Array<{ text: string }>)[0]?.text))).toEqual(accept({ confirm: true, count: 2 }));
  });
});

describe("the rounds of a 2026-07-28 plain call (X-MRTR-1)", () => {
  it("refuse an inputResponses answer that does not fit the form with -32602 naming the field; the same round with a fitting one completes", async () => {
    const args = { name: "ask_plain", arguments: { greeting: "Hi" } };
    const first = await statelessResult(server.url, "tools/call", args);
    const { body } = await statelessRpc(server.url, "tools/call", {
      ...args,
      inputResponses: { "input-1": accept({ name: 42 }) },
      requestState: first["requestState"],
    });
    expect(body.error?.code).toBe(-32602);
    expect(body.error?.message).toMatch(/inputResponses\.input-1: Invalid field "name": expected a string/);
    const second = await statelessResult(server.url, "tools/call", {
      ...args,
      inputResponses: { "input-1": accept({ name: "Ada" }) },
      requestState: first["requestState"],
    });
    expect(Object.keys(second["inputRequests"] as object)).toEqual(["input-2"]);
  });
});

describe("the official 2026-07-28 requestor (@modelcontextprotocol/ext-tasks)", () => {
  it("is refused with -32602 when its answer does not fit the form (X-UPD-4), and the task keeps its question", async () => {
    const { connectRequestor } = await import("../support/ext-tasks-requestor.js");
    const requestor = await connectRequestor(server.url, {
      endpointId: "answer-schema",
      onInputRequest: async () => accept({ confirm: "maybe" }) as never,
    });
    try {
      const execution = await requestor.session.callTool("form_question", {});
      expect(execution.kind).toBe("task");
      // The requestor's follow ends on the refused tasks/update; the server keeps the question open.
      const { outcome } = await execution.settle();
      expect(outcome).toMatchObject({ status: "failed", error: { code: -32602 } });
      const taskId = String(execution.handle?.taskId);
      expect((await server.app.engine.inspect.task(taskId))?.status).toBe("input_required");
    } finally {
      await requestor.close();
    }
  });
});
