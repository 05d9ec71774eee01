/** notifications/{tools,resources,prompts}/list_changed after run-time registrations and removals. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { listen, useFeatures, VIAS } from "./features-fixture.js";

describe.each(VIAS)("list_changed (%s)", (via) => {
  const start = useFeatures(via);

  it("declares listChanged for tools, resources and prompts, and subscribe for resources", async () => {
    const client = await (await start()).connect();
    expect(client.getServerCapabilities()).toMatchObject({
      tools: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      completions: {},
    });
  });

  it("announces a tool registered after the session began, and lists it", async () => {
    const fixture = await start();
    const client = await fixture.connect();
    const heard = listen(client);
    fixture.app.tool("late", { description: "Late.", input: z.object({}) }, async () => ({ content: [] }));
    expect((await heard.next()).method).toBe("notifications/tools/list_changed");
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain("late");
  });

  it("announces a removed tool", async () => {
    const fixture = await start();
    const client = await fixture.connect();
    const heard = listen(client);
    expect(fixture.app.removeTool("echo")).toBe(true);
    expect((await heard.next()).method).toBe("notifications/tools/list_changed");
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain("echo");
  });

  it("announces a resource registered after the session began", async () => {
    const fixture = await start();
    const client = await fixture.connect();
    const heard = listen(client);
    fixture.app.resource({ uri: "memo://late", name: "late" }, () => "late");
    expect((await heard.next()).method).toBe("notifications/resources/list_changed");
    expect((await client.listResources()).resources.map((r) => r.uri)).toContain("memo://late");
  });

  it("announces a removed resource template", async () => {
    const fixture = await start();
    const client = await fixture.connect();
    const heard = listen(client);
    expect(fixture.app.removeResource("users://{id}/profile")).toBe(true);
    expect((await heard.next()).method).toBe("notifications/resources/list_changed");
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
  });

  it("announces a prompt registered and one removed", async () => {
    const fixture = await start();
    const client = await fixture.connect();
    const heard = listen(client);
    fixture.app.prompt("late", { description: "Late." }, () => ({ messages: [] }));
    expect((await heard.next()).method).toBe("notifications/prompts/list_changed");
    expect(fixture.app.removePrompt("greeting")).toBe(true);
    expect((await heard.next()).method).toBe("notifications/prompts/list_changed");
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(["late"]);
  });

  it("says nothing when a removal finds nothing to remove", async () => {
    const fixture = await start();
    const client = await fixture.connect();
    const heard = listen(client);
    expect(fixture.app.removePrompt("nope")).toBe(false);
    fixture.app.resource({ uri: "memo://marker", name: "marker" }, () => "");
    expect((await heard.next()).method).toBe("notifications/resources/list_changed");
  });
});
