/** resources/list and resources/read on a 2025-11-25 session, in memory and over HTTP. */
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { useFeatures, VIAS } from "./features-fixture.js";

describe.each(VIAS)("resources (%s)", (via) => {
  const start = useFeatures(via);

  it("lists the static resources with the fields they were given, then those a template's list names", async () => {
    const client = await (await start()).connect();
    const { resources, nextCursor } = await client.listResources();
    expect(resources).toEqual([
      { uri: "memo://readme", name: "readme", title: "Read me", description: "A text.", mimeType: "text/plain", size: 5 },
      { uri: "memo://logo", name: "logo", mimeType: "image/png" },
      { uri: "users://ada/profile", name: "Ada's profile" },
    ]);
    expect(nextCursor).toBeUndefined();
  });

  it("pages resources/list with an opaque cursor when there are more than a page", async () => {
    const client = await (await start({ server: { pageSize: 2 } })).connect();
    const first = await client.listResources();
    expect(first.resources.map((r) => r.uri)).toEqual(["memo://readme", "memo://logo"]);
    expect(typeof first.nextCursor).toBe("string");
    const second = await client.listResources({ cursor: first.nextCursor as string });
    expect(second.resources.map((r) => r.uri)).toEqual(["users://ada/profile"]);
    expect(second.nextCursor).toBeUndefined();
  });

  it("refuses a cursor it did not issue with -32602", async () => {
    const client = await (await start()).connect();
    await expect(client.listResources({ cursor: "bm90LWEtY3Vyc29y.forged" })).rejects.toMatchObject({ code: -32602 });
  });

  it("reads a text resource with the resource's mimeType", async () => {
    const client = await (await start()).connect();
    expect(await client.readResource({ uri: "memo://readme" })).toEqual({
      contents: [{ uri: "memo://readme", mimeType: "text/plain", text: "hello" }],
    });
  });

  it("reads bytes as a base64 blob", async () => {
    const client = await (await start()).connect();
    const { contents } = await client.readResource({ uri: "memo://logo" });
    expect(contents).toEqual([{ uri: "memo://logo", mimeType: "image/png", blob: Buffer.from([137, 80, 78, 71]).toString("base64") }]);
  });

  it("reads a URI a template matches, with the variables it extracted", async () => {
    const client = await (await start()).connect();
    const { contents } = await client.readResource({ uri: "users://grace/profile" });
    expect(contents).toEqual([{ uri: "users://grace/profile", mimeType: "application/json", text: '{"id":"grace"}' }]);
  });

  it("answers an unknown URI with -32002 Resource not found, the uri in data", async () => {
    const client = await (await start()).connect();
    const error = await client.readResource({ uri: "memo://nothing" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: -32002, data: { uri: "memo://nothing" } });
    expect((error as McpError).message).toContain("Resource not found");
  });

  it("lists the templates", async () => {
    const client = await (await start()).connect();
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates).toEqual([
      { uriTemplate: "users://{id}/profile", name: "profile", description: "A user's profile.", mimeType: "application/json" },
    ]);
  });
});
