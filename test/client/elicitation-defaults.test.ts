/**
 * SEP-1034 on the requestor side: an accepted elicitation whose answer leaves out fields the
 * requested schema gives defaults for reaches the server with those defaults — in both eras, for
 * a plain call and for a task (T-INPUT-3: the question comes on the tasks/result stream;
 * X-UPD-1: as an inputRequest answered with tasks/update; X-MRTR-1: in MRTR rounds). Against our
 * own server over real HTTP on a real SQLite file; the tool echoes what it received.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { ElicitRequestFormParams, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { TaskClient } from "../../src/client/task-client.js";
import { withSchemaDefaults } from "../../src/client/elicitation-defaults.js";
import type { ElicitHandler } from "../../src/client/receiver-options.js";
import { serveHttp, type HttpHandle } from "../../src/http/http-server.js";
import { createTaskServer, type TaskServer } from "../../src/mcp/task-server.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";

const FORM: ElicitRequestFormParams = {
  mode: "form",
  message: "Your profile",
  requestedSchema: {
    type: "object",
    properties: {
      name: { type: "string", default: "John Doe" },
      age: { type: "integer", default: 30 },
      score: { type: "number", default: 95.5 },
      status: { type: "string", enum: ["active", "inactive"], default: "active" },
      verified: { type: "boolean", default: true },
      nickname: { type: "string" },
    },
  },
};

let dir: string;
let app: TaskServer;
let http: HttpHandle;
const clients: TaskClient[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-elicit-defaults-"));
  app = createTaskServer({
    name: "defaults",
    version: "0.0.0",
    rateLimit: "off",
    failedLookups: "off",
    pollIntervalMs: 50,
    backgroundAfterMs: null,
    store: sqliteStore(join(dir, "tasks.db")),
  });
  app.tool("profile", { input: z.object({}), taskSupport: "optional" }, async (_args, ctx) => {
    const answer = await ctx.elicit(FORM);
    return { content: [{ type: "text", text: JSON.stringify(answer) }] };
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

async function connect(protocol: "2025-11-25" | "2026-07-28", elicit: ElicitHandler, applySchemaDefaults?: boolean): Promise<TaskClient> {
  const client = await TaskClient.connect(http.url, {
    protocol,
    elicit,
    ...(applySchemaDefaults !== undefined && { applySchemaDefaults }),
  });
  clients.push(client);
  return client;
}

/** What the server's tool received, for a plain call or a task. */
async function received(client: TaskClient, task: boolean): Promise<ElicitResult> {
  const call = await client.callTool("profile", {}, { task });
  const result = call.kind === "result" ? call.result : await call.task.result();
  expect(call.kind).toBe(task ? "task" : "result");
  const first = result.content[0];
  if (first?.type !== "text") throw new Error("expected text");
  return JSON.parse(first.text) as ElicitResult;
}

const ALL_DEFAULTS = { age: 30, score: 95.5, status: "active", verified: true };
const acceptName: ElicitHandler = async () => ({ action: "accept", content: { name: "Ann" } });

describe.each(["2025-11-25", "2026-07-28"] as const)("SEP-1034 under %s", (protocol) => {
  it.each([false, true])(
    "task=%s: the fields the answer leaves out arrive with their schema defaults, the given one as given",
    async (task) => {
      const client = await connect(protocol, acceptName);
      expect(await received(client, task)).toEqual({ action: "accept", content: { name: "Ann", ...ALL_DEFAULTS } });
    },
  );

  it("an accept with no content at all gets every default; a field without a default stays out", async () => {
    const client = await connect(protocol, async () => ({ action: "accept" }));
    expect(await received(client, false)).toEqual({ action: "accept", content: { name: "John Doe", ...ALL_DEFAULTS } });
  });

  it("applySchemaDefaults: false sends the handler's content exactly", async () => {
    const client = await connect(protocol, acceptName, false);
    expect(await received(client, false)).toEqual({ action: "accept", content: { name: "Ann" } });
  });

  it("a decline stays a decline, without content", async () => {
    const client = await connect(protocol, async () => ({ action: "decline" }));
    expect(await received(client, false)).toEqual({ action: "decline" });
  });
});

describe("withSchemaDefaults", () => {
  it("keeps given values that are falsy (false, 0, empty text) and skips defaults that are not form values", () => {
    const params: ElicitRequestFormParams = {
      mode: "form",
      message: "m",
      requestedSchema: {
        type: "object",
        properties: {
          on: { type: "boolean", default: true },
          n: { type: "number", default: 5 },
          text: { type: "string", default: "x" },
          tags: { type: "array", items: { type: "string", enum: ["a", "b"] }, default: ["a"] },
          odd: { type: "string", default: { not: "a form value" } } as never,
        },
      },
    };
    expect(withSchemaDefaults(params, { action: "accept", content: { on: false, n: 0, text: "" } })).toEqual({
      action: "accept",
      content: { on: false, n: 0, text: "", tags: ["a"] },
    });
  });

  it("leaves a URL-mode answer and a cancel untouched", () => {
    const url = { mode: "url" as const, message: "go", url: "https://example.com", elicitationId: "e1" };
    expect(withSchemaDefaults(url, { action: "accept" })).toEqual({ action: "accept" });
    expect(withSchemaDefaults(FORM, { action: "cancel" })).toEqual({ action: "cancel" });
  });
});
