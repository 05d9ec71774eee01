/**
 * A creation's own webhook, `_meta["dev.mcp-tasks/webhook"]`, in both eras from one table of cases:
 * accepted under an operator-allowed URL prefix (the task's routes name it), refused with -32602
 * naming the reason otherwise, before anything is stored.
 */
import { CreateTaskResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WEBHOOK_META_KEY } from "../../src/mcp/webhook-request.js";
import type { WebhooksInput } from "../../src/runtime/webhooks/webhook-config.js";
import { inMemoryFixture, type Fixture } from "../support/in-memory-fixture.js";
import { envelope, statelessRpc } from "../support/stateless-client.js";
import { startTasksExtServer, type TasksExtServer } from "../support/tasks-ext-server.js";

const secret = `whsec_${randomBytes(24).toString("base64")}`;
const webhooks: WebhooksInput = {
  perTask: [{ id: "hooks", prefix: "https://hooks.example.com/in/", secret }],
};

/** How each era creates a task with `_meta[WEBHOOK_META_KEY] = value`: the task id, or the JSON-RPC error. */
type Create = (value: unknown) => Promise<{ taskId: string } | { code: number; message: string }>;

interface Era {
  name: string;
  create: Create;
  createWithout: Create;
  routes(taskId: string): Promise<unknown>;
  count(): Promise<number>;
}

let rev2025: Fixture;
let rev2025Plain: Fixture;
let rev2026: TasksExtServer;
let rev2026Plain: TasksExtServer;

const via2025 =
  (fixture: () => Fixture): Create =>
  async (value) => {
    try {
      const created = await fixture().client.request(
        {
          method: "tools/call",
          params: { name: "sleep", arguments: { ms: 1 }, task: { ttl: 60_000 }, _meta: { [WEBHOOK_META_KEY]: value } },
        },
        CreateTaskResultSchema,
      );
      return { taskId: created.task.taskId };
    } catch (error) {
      if (error instanceof McpError) return { code: error.code, message: error.message };
      throw error;
    }
  };

const via2026 =
  (server: () => TasksExtServer): Create =>
  async (value) => {
    const { body } = await statelessRpc(
      server().url,
      "tools/call",
      { name: "count_required", arguments: {} },
      { meta: { ...envelope(), [WEBHOOK_META_KEY]: value } },
    );
    if (body.error) return { code: body.error.code, message: body.error.message };
    return { taskId: String(body.result?.["taskId"]) };
  };

const eras: Era[] = [
  {
    name: "2025-11-25",
    create: via2025(() => rev2025),
    createWithout: via2025(() => rev2025Plain),
    routes: async (taskId) => (await rev2025.app.engine.store.get(taskId, { any: true }))?.origin.webhooks,
    count: async () => (await rev2025.app.engine.store.search({ scope: { any: true } }, null, 1000)).length,
  },
  {
    name: "2026-07-28",
    create: via2026(() => rev2026),
    createWithout: via2026(() => rev2026Plain),
    routes: async (taskId) => (await rev2026.app.engine.store.get(taskId, { any: true }))?.origin.webhooks,
    count: async () => (await rev2026.app.engine.store.search({ scope: { any: true } }, null, 1000)).length,
  },
];

beforeAll(async () => {
  rev2025 = await inMemoryFixture({ webhooks });
  rev2025Plain = await inMemoryFixture();
  rev2026 = await startTasksExtServer({ app: { webhooks } });
  rev2026Plain = await startTasksExtServer();
});
afterAll(async () => {
  await Promise.all([rev2025.close(), rev2025Plain.close(), rev2026.close(), rev2026Plain.close()]);
});

const refusals: Array<[string, unknown, RegExp]> = [
  ["a URL outside every allowed prefix", "https://evil.example.com/in/x", /not under a prefix the operator allows/],
  ["a prefix's look-alike host", "https://hooks.example.com.evil.test/in/x", /not under a prefix the operator allows/],
  ["a path beside the prefix", "https://hooks.example.com/other", /not under a prefix the operator allows/],
  ["something that is not a URL", "not a url", /not a valid URL/],
  ["a scheme other than http(s)", "ftp://hooks.example.com/in/x", /must be http or https/],
  ["a URL with credentials", "https://user:pw@hooks.example.com/in/x", /must not carry credentials/],
  ["a number", 42, /must be a URL string or an object with a url/],
];

describe.each(eras)("per-task webhook under $name", (era) => {
  it("accepts a URL under an allowed prefix, as a string or { url }, and routes the task's events there", async () => {
    for (const value of ["https://hooks.example.com/in/run-1?token=abc", { url: "https://hooks.example.com/in/run-2" }]) {
      const created = await era.create(value);
      expect(created).toHaveProperty("taskId");
      const url = typeof value === "string" ? value : value.url;
      expect(await era.routes((created as { taskId: string }).taskId)).toEqual([
        { url, endpoint: "hooks", events: ["task.input_required", "task.completed", "task.failed", "task.cancelled"] },
      ]);
    }
  });

  it.each(refusals)("refuses %s with -32602 naming the reason, storing nothing", async (_case, value, reason) => {
    const before = await era.count();
    const refused = await era.create(value);
    expect(refused).toMatchObject({ code: -32602, message: expect.stringMatching(reason) });
    expect((refused as { message: string }).message).toContain(WEBHOOK_META_KEY);
    expect(await era.count()).toBe(before);
  });

  it("refuses any per-task webhook on a server that allows none", async () => {
    expect(await era.createWithout("https://hooks.example.com/in/x")).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/accepts no per-task webhooks/),
    });
  });
});
