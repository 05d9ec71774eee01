/** What withTasks refuses before any transport is involved: each mistake says what to do instead. */
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { describe, expect, it } from "vitest";
import { memoryStore } from "../../src/exports/server.js";
import { withTasks } from "../../src/exports/sdk.js";

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });

function appWith(options: ConstructorParameters<typeof McpServer>[1] = {}): McpServer {
  const server = new McpServer({ name: "checks", version: "1.0.0" }, options);
  server.registerTool("work", {}, async () => text("done"));
  return server;
}

describe("withTasks refusals", () => {
  it("refuses a tool name that is not registered on the McpServer", () => {
    expect(() => withTasks(appWith(), { store: memoryStore(), tools: { missing: { taskSupport: "optional" } } })).toThrow(
      /no tool missing is registered/,
    );
  });

  it("refuses an McpServer already connected to a transport (capabilities are declared at initialize)", async () => {
    const app = appWith();
    const [, serverSide] = InMemoryTransport.createLinkedPair();
    await app.connect(serverSide);
    expect(() => withTasks(app, { store: memoryStore(), tools: { work: { taskSupport: "optional" } } })).toThrow(/before connecting/);
    await app.close();
  });

  it("refuses an McpServer created with the SDK's own taskStore", () => {
    const app = appWith({ taskStore: new InMemoryTaskStore() });
    expect(() => withTasks(app, { store: memoryStore(), tools: { work: { taskSupport: "optional" } } })).toThrow(/SDK's own taskStore/);
  });

  it("refuses a tool registered with experimental.tasks.registerToolTask", () => {
    const app = new McpServer({ name: "checks", version: "1.0.0" });
    app.experimental.tasks.registerToolTask(
      "sdk_task",
      { execution: { taskSupport: "optional" } },
      {
        createTask: async () => {
          throw new Error("unused");
        },
        getTask: async () => {
          throw new Error("unused");
        },
        getTaskResult: async () => {
          throw new Error("unused");
        },
      },
    );
    expect(() => withTasks(app, { store: memoryStore(), tools: { sdk_task: { taskSupport: "optional" } } })).toThrow(/registerToolTask/);
  });
});
