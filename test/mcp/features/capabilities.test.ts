/** What a session declares, and serves, for what is registered when it begins. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { useFeatures } from "./features-fixture.js";

describe("feature capabilities", () => {
  const start = useFeatures("in-memory");
  const toolsOnly = {
    setup: (app: import("../../../src/mcp/task-server.js").TaskServer) =>
      void app.tool("t", { input: z.object({}) }, async () => ({ content: [] })),
  };

  it("declares no resources, prompts or completions on a server with tools only", async () => {
    const client = await (await start(toolsOnly)).connect();
    const capabilities = client.getServerCapabilities() ?? {};
    expect(capabilities).not.toHaveProperty("resources");
    expect(capabilities).not.toHaveProperty("prompts");
    expect(capabilities).not.toHaveProperty("completions");
  });

  it("answers resources/list with -32601 on a server with tools only", async () => {
    const client = await (await start(toolsOnly)).connect();
    await expect(client.listResources()).rejects.toMatchObject({ code: -32601 });
  });

  it("keeps the tasks capability beside the feature capabilities", async () => {
    const client = await (await start()).connect();
    expect(client.getServerCapabilities()).toMatchObject({ tasks: { list: {}, cancel: {} }, resources: {}, prompts: {} });
  });
});
