/** prompts/list and prompts/get on a 2025-11-25 session, in memory and over HTTP. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createTaskServer } from "../../../src/mcp/task-server.js";
import { memoryStore } from "../../../src/store/memory/memory-store.js";
import { useFeatures, VIAS } from "./features-fixture.js";

describe.each(VIAS)("prompts (%s)", (via) => {
  const start = useFeatures(via);

  it("advertises the zod arguments as [{name, description, required}]", async () => {
    const client = await (await start()).connect();
    const { prompts } = await client.listPrompts();
    expect(prompts).toEqual([
      {
        name: "greeting",
        description: "Greets someone.",
        arguments: [
          { name: "name", description: "Who to greet", required: true },
          { name: "mood", required: false },
        ],
      },
    ]);
  });

  it("renders a prompt from its arguments", async () => {
    const client = await (await start()).connect();
    const result = await client.getPrompt({ name: "greeting", arguments: { name: "Ada", mood: "cheerful" } });
    expect(result).toEqual({
      description: "A greeting",
      messages: [{ role: "user", content: { type: "text", text: "Hello Ada (cheerful)" } }],
    });
  });

  it("answers a missing required argument with -32602", async () => {
    const client = await (await start()).connect();
    await expect(client.getPrompt({ name: "greeting", arguments: { mood: "grumpy" } })).rejects.toMatchObject({ code: -32602 });
  });

  it("answers an unknown prompt with -32602", async () => {
    const client = await (await start()).connect();
    await expect(client.getPrompt({ name: "nope" })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("Prompt not found: nope"),
    });
  });
});

describe("prompt registration", () => {
  it("refuses an argument that is not a string field", () => {
    const app = createTaskServer({ name: "t", version: "0", store: memoryStore() });
    expect(() => app.prompt("bad", { arguments: z.object({ count: z.number() }) as never }, () => ({ messages: [] }))).toThrow(
      /must be a string field/,
    );
  });
});
