/**
 * The SDK private fields withTasks reads (src/mcp/sdk-server/sdk-internals.ts), checked on the
 * installed SDK: a release that renames or reshapes one fails here, not in a user's server.
 */
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { hasSdkTaskStore, registeredToolsOf, requestHandlerOf } from "../../src/mcp/sdk-server/sdk-internals.js";

function serverWithTool(): McpServer {
  const server = new McpServer({ name: "internals", version: "1.0.0" });
  server.registerTool("echo", { inputSchema: { message: z.string() } }, async ({ message }) => ({
    content: [{ type: "text", text: message }],
  }));
  return server;
}

describe("the SDK internals withTasks reads", () => {
  it("registeredToolsOf finds a tool registered with registerTool, with its callback, schema and enabled flag", () => {
    const tool = registeredToolsOf(serverWithTool())["echo"];
    expect(typeof tool?.handler).toBe("function");
    expect(tool?.inputSchema).toBeDefined();
    expect(tool?.enabled).toBe(true);
  });

  it("registeredToolsOf follows remove(): the map is live", () => {
    const server = serverWithTool();
    registeredToolsOf(server)["echo"]?.remove();
    expect(registeredToolsOf(server)["echo"]).toBeUndefined();
  });

  it("requestHandlerOf finds the tools/list and tools/call handlers McpServer installed", () => {
    const server = serverWithTool().server;
    expect(typeof requestHandlerOf(server, "tools/list")).toBe("function");
    expect(typeof requestHandlerOf(server, "tools/call")).toBe("function");
    expect(requestHandlerOf(server, "no/such")).toBeUndefined();
  });

  it("hasSdkTaskStore tells a server created with the SDK's taskStore from one without", () => {
    const plain = new McpServer({ name: "plain", version: "1.0.0" });
    const withStore = new McpServer({ name: "store", version: "1.0.0" }, { taskStore: new InMemoryTaskStore() });
    expect(hasSdkTaskStore(plain.server)).toBe(false);
    expect(hasSdkTaskStore(withStore.server)).toBe(true);
  });
});
