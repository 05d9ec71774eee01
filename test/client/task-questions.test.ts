/**
 * A task's questions as a TaskClient answers them, in both eras from one table, against our own
 * server over real HTTP on a real SQLite file: a caller that only follows `updates()` gets past
 * `input_required` (T-INPUT-3: the requestor answers as soon as it sees it; X-GET-3 / X-UPD-1:
 * the question read from `tasks/get` and answered with `tasks/update`), and an answer the
 * receiver refuses for not fitting the question leaves it open, asked again by the next wait.
 *
 * A handler that refuses a question (nobody to answer a sampling request): under 2025-11-25 the
 * refusal reaches the server as the request's error and the task fails with it (T-RES-4); under
 * 2026-07-28 an answer is the only thing `tasks/update` can carry (X-UPD-4), so the caller learns
 * the refusal as an InputRefusedError with the same code and message, and the task keeps waiting.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { TaskClient } from "../../src/client/task-client.js";
import type { ElicitHandler, SampleHandler } from "../../src/client/receiver-options.js";
import { serveHttp, type HttpHandle } from "../../src/http/http-server.js";
import { createTaskServer, type TaskServer } from "../../src/mcp/task-server.js";
import { InputRefusedError, RemoteError } from "../../src/mcp/requestor/requestor-errors.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";

let dir: string;
let app: TaskServer;
let http: HttpHandle;
const clients: TaskClient[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-task-questions-"));
  app = createTaskServer({
    name: "questions",
    version: "0.0.0",
    rateLimit: "off",
    failedLookups: "off",
    pollIntervalMs: 50,
    backgroundAfterMs: null,
    store: sqliteStore(join(dir, "tasks.db")),
  });
  app.tool("render", { input: z.object({}), taskSupport: "optional" }, async (_args, ctx) => {
    const answer = await ctx.elicit({
      mode: "form",
      message: "Render in 4K?",
      requestedSchema: { type: "object", properties: { fourK: { type: "boolean" } }, required: ["fourK"] },
    });
    return { content: [{ type: "text", text: `rendered (${answer.action}, fourK ${String(answer.content?.["fourK"])})` }] };
  });
  app.tool("summarise", { input: z.object({}), taskSupport: "optional" }, async (_args, ctx) => {
    const reply = await ctx.sample({ messages: [{ role: "user", content: { type: "text", text: "Summarise" } }], maxTokens: 16 });
    return { content: [{ type: "text", text: reply.content.type === "text" ? reply.content.text : "" }] };
  });
  http = await serveHttp(app, { port: 0, host: "127.0.0.1" });
}, 30_000);

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

afterAll(async () => {
  await http?.close();
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function renderTask(protocol: "2025-11-25" | "2026-07-28", elicit: ElicitHandler) {
  const client = await TaskClient.connect(http.url, { protocol, elicit });
  clients.push(client);
  const call = await client.callTool("render", {}, { task: true });
  if (call.kind !== "task") throw new Error("expected a task");
  return call.task;
}

describe.each(["2025-11-25", "2026-07-28"] as const)("a task's question under %s", (protocol) => {
  it("is answered while the caller only follows updates(), and the task then completes", { timeout: 20_000 }, async () => {
    let asked = 0;
    const task = await renderTask(protocol, async () => {
      asked++;
      return { action: "accept", content: { fourK: true } };
    });
    const seen: string[] = [];
    for await (const update of task.updates()) seen.push(update.status);
    expect(seen).toContain("input_required");
    expect(seen.at(-1)).toBe("completed");
    expect(asked).toBe(1);
    expect(await task.result()).toMatchObject({ content: [{ type: "text", text: "rendered (accept, fourK true)" }] });
  });

  it("stays open when the receiver refuses an answer that does not fit it, and the next wait asks again", { timeout: 20_000 }, async () => {
    const answers = [{ fourK: "yes" }, { fourK: false }];
    let asked = 0;
    const task = await renderTask(protocol, async () => ({
      action: "accept",
      content: answers[asked++] as Record<string, string | boolean>,
    }));
    const first = await task.result().then(
      () => null,
      (error: unknown) => error,
    );
    expect(first).toBeInstanceOf(RemoteError);
    expect(first).toMatchObject({ code: -32602, message: expect.stringContaining("fourK") });
    expect(await task.result()).toMatchObject({ content: [{ type: "text", text: "rendered (accept, fourK false)" }] });
    expect(asked).toBe(2);
  });
});

const REFUSALS = [
  { protocol: "2025-11-25", errorClass: RemoteError, taskAfter: "failed" },
  { protocol: "2026-07-28", errorClass: InputRefusedError, taskAfter: "input_required" },
] as const;

describe.each(REFUSALS)("a refused sampling request under $protocol", ({ protocol, errorClass, taskAfter }) => {
  it("ends the wait with the refusal's code and message, asking the handler once", { timeout: 20_000 }, async () => {
    let asked = 0;
    const refuse: SampleHandler = async () => {
      asked++;
      throw new McpError(-1, "No one is here to answer");
    };
    const client = await TaskClient.connect(http.url, { protocol, sample: refuse });
    clients.push(client);
    const call = await client.callTool("summarise", {}, { task: true });
    if (call.kind !== "task") throw new Error("expected a task");
    const error = await call.task.result().then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(errorClass);
    expect(error).toMatchObject({ code: -1, message: expect.stringContaining("No one is here to answer") });
    expect(asked).toBe(1);
    expect((await client.get(call.task.id)).status).toBe(taskAfter);
  });
});
