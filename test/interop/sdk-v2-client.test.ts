/**
 * The official SDK's v2 client, @modelcontextprotocol/client 2.x, as a requestor against our
 * server in both protocol eras, from one table of cases: a task run to its result, a question
 * answered, progress, a cancel.
 *
 * - 2025-11-25: the v2 client negotiates the legacy era and declares no task support, so it is
 *   served as a task-less host is (docs/hosts/README.md): a long call answers with its task id,
 *   and `task_result` / `task_cancel` / `task_status` reach the task; questions and progress
 *   travel on the call's own stream.
 * - 2026-07-28: the same client pinned to the modern era, with the official tasks-extension
 *   session on it (@modelcontextprotocol/ext-tasks): CreateTaskResult, tasks/get, tasks/update,
 *   tasks/cancel. Progress of a call answered inline comes on the call's stream.
 *
 * And the v2 client's request timeout, which progress does not extend (`resetTimeoutOnProgress`
 * is off by default): a long plain call times out however much progress it gets, while the
 * fallback answer (2025-11-25) or the task path (2026-07-28) keeps the work alive past it.
 */
import { Client, StreamableHTTPClientTransport, type CallToolResult } from "@modelcontextprotocol/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { connectRequestor } from "../support/ext-tasks-requestor.js";

const CLIENT_INFO = { name: "sdk-v2-interop", version: "0.0.0" };
/** How long a 2025-11-25 plain call of a task tool waits before it answers with the task id. */
const BACKGROUND_AFTER_MS = 300;

interface Case {
  name: string;
  tool: string;
  arguments: Record<string, string | number>;
  /** The answer to the task's elicitation, if it asks one. */
  answer?: string;
  /** Cancel the task once it runs. */
  cancel?: true;
  /** Call plainly with a progress callback (progress arrives on the call's stream). */
  progress?: true;
  expected: { status: "completed" | "cancelled"; text?: string; asked?: string[]; progress?: true };
}

const CASES: Case[] = [
  {
    name: "a task runs to its result",
    tool: "sleep",
    arguments: { ms: 1200 },
    expected: { status: "completed", text: "slept 1200 ms" },
  },
  {
    name: "the task's question is answered and its result carries the answer",
    tool: "ask",
    arguments: { question: "Your name?" },
    answer: "v2",
    expected: { status: "completed", text: "answer: v2", asked: ["Your name?"] },
  },
  {
    name: "progress reaches the client's onprogress",
    tool: "sleep",
    arguments: { ms: 200, steps: 4 },
    progress: true,
    expected: { status: "completed", text: "slept 200 ms", progress: true },
  },
  {
    name: "a running task is cancelled and reads cancelled",
    tool: "sleep",
    arguments: { ms: 60_000 },
    cancel: true,
    expected: { status: "cancelled" },
  },
];

interface Outcome {
  status: string;
  text?: string;
  asked: string[];
  progress: number;
}

interface Era {
  name: string;
  run(url: URL, c: Case): Promise<Outcome>;
}

const textOf = (result: { content?: unknown }): string | undefined =>
  (result.content as Array<{ type: string; text?: string }> | undefined)?.find((part) => part.type === "text")?.text;

/** A v2 client connected to `url`, answering elicitations with `answer` and noting what was asked. */
async function legacyClient(url: URL, answer: string | undefined, asked: string[]): Promise<Client> {
  const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: "legacy" }, capabilities: { elicitation: {} } });
  client.setRequestHandler("elicitation/create", async (request) => {
    asked.push(String(request.params.message));
    return answer === undefined ? { action: "decline" } : { action: "accept", content: { answer } };
  });
  await client.connect(new StreamableHTTPClientTransport(url));
  return client;
}

const clients: Client[] = [];
const closers: Array<() => Promise<void>> = [];

const LEGACY: Era = {
  name: "2025-11-25 (no task support declared: the fallback)",
  async run(url, c) {
    const asked: string[] = [];
    let progress = 0;
    const client = await legacyClient(url, c.answer, asked);
    clients.push(client);
    let result = (await client.callTool(
      { name: c.tool, arguments: c.arguments },
      c.progress ? { onprogress: () => void progress++ } : {},
    )) as CallToolResult;
    const background = (r: CallToolResult) => r.structuredContent as { taskId?: string; status?: string } | undefined;
    const taskId = background(result)?.taskId;
    if (taskId !== undefined && c.cancel) {
      await client.callTool({ name: "task_cancel", arguments: { taskId } });
      const status = background((await client.callTool({ name: "task_status", arguments: { taskId } })) as CallToolResult)?.status;
      return { status: String(status), asked, progress };
    }
    // task_result answers with the task's result once it ends, or again with its id while it runs.
    while (background(result)?.taskId !== undefined && ["working", "input_required"].includes(String(background(result)?.status))) {
      result = (await client.callTool({ name: "task_result", arguments: { taskId: background(result)?.taskId } })) as CallToolResult;
    }
    return { status: result.isError ? "failed" : "completed", text: textOf(result), asked, progress };
  },
};

const MODERN: Era = {
  name: "2026-07-28 (the tasks extension, @modelcontextprotocol/ext-tasks on the v2 client)",
  async run(url, c) {
    const asked: string[] = [];
    let progress = 0;
    if (c.progress) {
      const client = new Client(CLIENT_INFO, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
      clients.push(client);
      await client.connect(new StreamableHTTPClientTransport(url));
      const result = (await client.callTool(
        { name: c.tool, arguments: c.arguments },
        { onprogress: () => void progress++ },
      )) as CallToolResult;
      return { status: "completed", text: textOf(result), asked, progress };
    }
    const requestor = await connectRequestor(url, {
      endpointId: "v2-interop",
      onInputRequest: async (request) => {
        asked.push(request.kind === "elicitation" ? String(request.params["message"]) : request.kind);
        return { action: "accept", content: { answer: c.answer } } as never;
      },
    });
    closers.push(() => requestor.close());
    const execution = await requestor.session.callTool(c.tool, c.arguments);
    if (execution.kind !== "task") throw new Error(`expected a task, got ${execution.kind}`);
    if (c.cancel) {
      await execution.cancel();
      return { status: (await execution.result()).status, asked, progress };
    }
    const { outcome } = await execution.settle();
    const result = outcome.status === "completed" ? (outcome as { result: CallToolResult }).result : undefined;
    return { status: outcome.status, ...(result && { text: textOf(result) }), asked, progress };
  },
};

let server: HttpServerFixture;
beforeEach(async () => {
  server = await startHttpServer({ app: { pollIntervalMs: 50, backgroundAfterMs: BACKGROUND_AFTER_MS } });
});
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close().catch(() => undefined)));
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => undefined)));
  await server.close();
});

for (const era of [LEGACY, MODERN]) {
  describe(`@modelcontextprotocol/client 2.x against our server, ${era.name}`, () => {
    it.each(CASES)(
      "$name",
      async (c) => {
        const outcome = await era.run(server.url, c);
        expect(outcome.status).toBe(c.expected.status);
        if (c.expected.text !== undefined) expect(outcome.text).toBe(c.expected.text);
        if (c.expected.asked !== undefined) expect(outcome.asked).toEqual(c.expected.asked);
        if (c.expected.progress) expect(outcome.progress).toBeGreaterThan(0);
      },
      30_000,
    );
  });
}

describe("the v2 client's request timeout, which progress does not extend", () => {
  const LONG = { name: "sleep", arguments: { ms: 2500, steps: 10 } };
  const TIMEOUT_MS = 1000;

  it("a plain call longer than the timeout fails with RequestTimeout though progress kept arriving (fallback off)", async () => {
    await server.close();
    server = await startHttpServer({ app: { pollIntervalMs: 50, backgroundAfterMs: null } });
    const client = await legacyClient(server.url, undefined, []);
    clients.push(client);
    let progress = 0;
    const call = client.callTool(LONG, { timeout: TIMEOUT_MS, onprogress: () => void progress++ });
    await expect(call).rejects.toThrow(/timed out|timeout/i);
    expect(progress).toBeGreaterThan(0);
  }, 30_000);

  it("2025-11-25: the fallback answers within the timeout with the task id, and task_result later gives the result", async () => {
    const client = await legacyClient(server.url, undefined, []);
    clients.push(client);
    const started = Date.now();
    const first = (await client.callTool(LONG, { timeout: TIMEOUT_MS, onprogress: () => {} })) as CallToolResult;
    const taskId = (first.structuredContent as { taskId?: string }).taskId;
    expect(taskId).toEqual(expect.any(String));
    // task_status answers at once: polled within the same timeout until the task ends, then task_result.
    const status = async () =>
      ((await client.callTool({ name: "task_status", arguments: { taskId } }, { timeout: TIMEOUT_MS })) as CallToolResult)
        .structuredContent as { status?: string };
    await expect.poll(async () => (await status()).status, { timeout: 15_000, interval: 200 }).toBe("completed");
    const result = (await client.callTool({ name: "task_result", arguments: { taskId } }, { timeout: TIMEOUT_MS })) as CallToolResult;
    expect(textOf(result)).toBe("slept 2500 ms");
    expect(Date.now() - started).toBeGreaterThan(TIMEOUT_MS);
  }, 30_000);

  it("2026-07-28: the task path polls with short requests and reads the result past the timeout", async () => {
    const requestor = await connectRequestor(server.url, { endpointId: "v2-timeout" });
    closers.push(() => requestor.close());
    const started = Date.now();
    const execution = await requestor.session.callTool(LONG.name, LONG.arguments);
    expect(execution.kind).toBe("task");
    const { outcome } = await execution.settle();
    expect(outcome.status).toBe("completed");
    expect(textOf((outcome as { result: CallToolResult }).result)).toBe("slept 2500 ms");
    expect(Date.now() - started).toBeGreaterThan(TIMEOUT_MS);
  }, 30_000);
});
