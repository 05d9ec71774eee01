/** completion/complete for prompt arguments and template variables, in memory and over HTTP. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { registerSampleFeatures, useFeatures, VIAS } from "./features-fixture.js";

describe.each(VIAS)("completion/complete (%s)", (via) => {
  const start = useFeatures(via);

  it("suggests values for a prompt argument from what was typed", async () => {
    const client = await (await start()).connect();
    const { completion } = await client.complete({ ref: { type: "ref/prompt", name: "greeting" }, argument: { name: "name", value: "A" } });
    expect(completion).toEqual({ values: ["Ada", "Alan"], hasMore: false });
  });

  it("hands the completer the other arguments of context.arguments", async () => {
    const client = await (await start()).connect();
    const { completion } = await client.complete({
      ref: { type: "ref/prompt", name: "greeting" },
      argument: { name: "name", value: "Mood" },
      context: { arguments: { mood: "sunny" } },
    });
    expect(completion.values).toEqual(["Mood-sunny"]);
  });

  it("suggests values for a resource template variable", async () => {
    const client = await (await start()).connect();
    const { completion } = await client.complete({
      ref: { type: "ref/resource", uri: "users://{id}/profile" },
      argument: { name: "id", value: "g" },
    });
    expect(completion.values).toEqual(["grace"]);
  });

  it("gives no suggestions for an argument without a completer", async () => {
    const client = await (await start()).connect();
    const { completion } = await client.complete({ ref: { type: "ref/prompt", name: "greeting" }, argument: { name: "mood", value: "" } });
    expect(completion).toEqual({ values: [], hasMore: false });
  });

  it("sends at most 100 values, with the total and hasMore when there were more", async () => {
    const fixture = await start({
      setup: (app) => {
        registerSampleFeatures(app);
        app.prompt(
          "many",
          {
            description: "Many.",
            arguments: z.object({ n: z.string() }),
            complete: { n: () => Array.from({ length: 150 }, (_, i) => String(i)) },
          },
          () => ({ messages: [] }),
        );
      },
    });
    const client = await fixture.connect();
    const { completion } = await client.complete({ ref: { type: "ref/prompt", name: "many" }, argument: { name: "n", value: "" } });
    expect(completion.values).toHaveLength(100);
    expect(completion).toMatchObject({ total: 150, hasMore: true });
  });

  it("answers an unknown prompt with -32602", async () => {
    const client = await (await start()).connect();
    await expect(client.complete({ ref: { type: "ref/prompt", name: "nope" }, argument: { name: "x", value: "" } })).rejects.toMatchObject({
      code: -32602,
    });
  });
});
