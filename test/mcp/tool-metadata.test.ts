/**
 * What a ToolDefinition declares beyond its arguments — outputSchema, annotations, icons, `_meta` —
 * as tools/list shows it in both eras, and the check of a handler's `structuredContent` against
 * its outputSchema (a mismatch is the handler's failure: -32603, MCP 2025-11-25 server/tools).
 */
import { CallToolResultSchema, CreateTaskResultSchema, ErrorCode, ListToolsResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { memoryStore } from "../../src/store/memory/memory-store.js";
import type { TaskServer } from "../../src/mcp/task-server.js";
import { rpcError } from "../support/conformance.js";
import { inMemoryFixture, type Fixture } from "../support/in-memory-fixture.js";
import { statelessResult } from "../support/stateless-client.js";
import { startTasksExtServer, type TasksExtServer } from "../support/tasks-ext-server.js";

const DIALECT = "https://json-schema.org/draft/2020-12/schema";
const weather = z.object({ celsius: z.number(), city: z.string() });

/** Tools that return `structuredContent` as asked, so one test can break exactly one thing. */
function weatherTools(app: TaskServer): void {
  app.tool(
    "weather",
    {
      description: "Weather of a city.",
      input: z.object({ shape: z.enum(["fits", "wrong", "none", "error"]) }),
      outputSchema: weather,
      taskSupport: "optional",
      annotations: { readOnlyHint: true, openWorldHint: false, title: "Weather" },
      icons: [{ src: "https://example.com/sun.png", mimeType: "image/png" }],
      _meta: { "example.com/owner": "ops" },
    },
    async ({ shape }) => {
      const text = [{ type: "text" as const, text: "20 °C in Oslo" }];
      if (shape === "fits") return { content: text, structuredContent: { celsius: 20, city: "Oslo" } };
      if (shape === "wrong") return { content: text, structuredContent: { celsius: "warm", city: "Oslo" } };
      if (shape === "error") return { content: [{ type: "text" as const, text: "no station" }], isError: true };
      return { content: text };
    },
  );
}

let fx: Fixture | undefined;
let http: TasksExtServer | undefined;
afterEach(async () => {
  await fx?.close();
  await http?.close();
  fx = undefined;
  http = undefined;
});

async function listed(name: string): Promise<Record<string, unknown>> {
  fx ??= await inMemoryFixture({ setup: weatherTools });
  const { tools } = await fx.client.request({ method: "tools/list" }, ListToolsResultSchema);
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`${name} is not listed`);
  return tool as Record<string, unknown>;
}

const call = (shape: string) =>
  fx!.client.request({ method: "tools/call", params: { name: "weather", arguments: { shape } } }, CallToolResultSchema);

describe("tools/list (2025-11-25)", () => {
  it("keeps the $schema of an input schema", async () => {
    const tool = await listed("weather");
    expect(tool["inputSchema"]).toMatchObject({ $schema: DIALECT, type: "object" });
  });

  it("advertises the outputSchema as JSON Schema", async () => {
    const tool = await listed("weather");
    expect(tool["outputSchema"]).toMatchObject({
      type: "object",
      properties: { celsius: { type: "number" }, city: { type: "string" } },
      required: ["celsius", "city"],
    });
  });

  it("lists a tool's annotations, icons and _meta as declared", async () => {
    const tool = await listed("weather");
    expect(tool).toMatchObject({
      annotations: { readOnlyHint: true, openWorldHint: false, title: "Weather" },
      icons: [{ src: "https://example.com/sun.png", mimeType: "image/png" }],
      _meta: { "example.com/owner": "ops" },
    });
  });
});

describe("tools/list (2026-07-28)", () => {
  it("keeps the $schema of an input schema", async () => {
    http = await startTasksExtServer({ app: { store: memoryStore() } });
    const result = await statelessResult(http.url, "tools/list");
    const tools = result["tools"] as Array<Record<string, unknown>>;
    expect(tools.find((t) => t["name"] === "greet")?.["inputSchema"]).toMatchObject({ $schema: DIALECT });
  });
});

describe("structuredContent against the outputSchema", () => {
  it("returns structuredContent that fits the outputSchema", async () => {
    fx = await inMemoryFixture({ setup: weatherTools });
    expect((await call("fits")).structuredContent).toEqual({ celsius: 20, city: "Oslo" });
  });

  it("satisfies the SDK client's own check of structuredContent against the listed outputSchema", async () => {
    fx = await inMemoryFixture({ setup: weatherTools });
    await fx.client.listTools(); // the SDK client checks callTool results against the schemas it listed
    expect((await fx.client.callTool({ name: "weather", arguments: { shape: "fits" } })).structuredContent).toEqual({
      celsius: 20,
      city: "Oslo",
    });
  });

  it("answers -32603 when structuredContent does not fit the outputSchema", async () => {
    fx = await inMemoryFixture({ setup: weatherTools });
    const error = await rpcError(call("wrong"));
    expect(error.code).toBe(ErrorCode.InternalError);
    expect(error.message).toContain("celsius");
  });

  it("answers -32603 when a tool with an outputSchema returns no structuredContent", async () => {
    fx = await inMemoryFixture({ setup: weatherTools });
    expect((await rpcError(call("none"))).code).toBe(ErrorCode.InternalError);
  });

  it("passes an isError result through without checking it against the outputSchema", async () => {
    fx = await inMemoryFixture({ setup: weatherTools });
    expect(await call("error")).toMatchObject({ isError: true, content: [{ type: "text", text: "no station" }] });
  });

  it("fails a task whose structuredContent does not fit, with -32603 from tasks/result", async () => {
    fx = await inMemoryFixture({ setup: weatherTools });
    const created = await fx.client.request(
      { method: "tools/call", params: { name: "weather", arguments: { shape: "wrong" }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    const error = await rpcError(
      fx.client.request({ method: "tasks/result", params: { taskId: created.task.taskId } }, CallToolResultSchema),
    );
    expect(error.code).toBe(ErrorCode.InternalError);
  });
});
