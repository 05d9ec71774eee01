/**
 * A requestor's handler that refuses one of a task's questions (nobody to answer a sampling
 * request), in both eras from one table, against our own server over real HTTP on a real SQLite
 * file. Under 2025-11-25 the refusal reaches the server as the request's error (T-INPUT-3: the
 * question comes on the tasks/result stream) and the task fails with it (T-RES-4); under
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
import type { SampleHandler } from "../../src/client/receiver-options.js";
import { serveHttp, type HttpHandle } from "../../src/http/http-server.js";
import { createTaskServer, type TaskServer } from "../../src/mcp/task-server.js";
import { InputRefusedError, RemoteError } from "../../src/mcp/requestor-errors.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";

let dir: string;
let app: TaskServer;
let http: HttpHandle;
const clients: TaskClient[] = [];
let sampleCalls = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-input-refusal-"));
  app = createTaskServer({ name: "refusal", version: "0.0.0", rateLimit: "off", failedLookups: "off", pollIntervalMs: 50, backgroundAfterMs: null, store: sqliteStore(join(dir, "tasks.db")) });
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

const refuse: SampleHandler = async () => {
  sampleCalls++;
  throw new McpError(-1, "No one is here to answer");
};

const ERAS = [
  { protocol: "2025-11-25", errorClass: RemoteError, taskAfter: "failed" },
  { protocol: "2026-07-28", errorClass: InputRefusedError, taskAfter: "input_required" },
] as const;

describe.each(ERAS)("a refused sampling request under $protocol", ({ protocol, errorClass, taskAfter }) => {
  it("ends the wait with the refusal's code and message, asking the handler once", { timeout: 20_000 }, async () => {
    const client = await TaskClient.connect(http.url, { protocol, sample: refuse });
    clients.push(client);
    sampleCalls = 0;
    const call = await client.callTool("summarise", {}, { task: true });
    if (call.kind !== "task") throw new Error("expected a task");
    const error = await call.task.result().then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(errorClass);
    expect(error).toMatchObject({ code: -1, message: expect.stringContaining("No one is here to answer") });
    expect(sampleCalls).toBe(1);
    expect((await client.get(call.task.id)).status).toBe(taskAfter);
  });
});
