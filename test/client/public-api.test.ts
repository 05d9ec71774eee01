/** The requestor guide's example (docs/requestor.md), through the package's public entry points only (`mcp-tasks`, `mcp-tasks/client`). */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterEach, expect, it } from "vitest";
import { z } from "zod";
import { memoryJournal, RemoteError, TaskClient } from "../../src/exports/client.js";
import { createTaskServer, memoryStore, type TaskServer } from "../../src/exports/server.js";

let app: TaskServer | null = null;
afterEach(async () => {
  await app?.close();
  app = null;
});

it("the requestor guide's example: a render tool asking with { asTask: true }, called through TaskClient, resumed by id in a new session", async () => {
  app = createTaskServer({ name: "render-farm", version: "1.0.0", store: memoryStore(), pollIntervalMs: 50 });
  app.tool("render", { input: z.object({ scene: z.string() }), taskSupport: "optional" }, async ({ scene }, ctx) => {
    ctx.progress(1, 2, "loading");
    const answer = await ctx.elicit(
      {
        mode: "form",
        message: "Use 4K?",
        requestedSchema: { type: "object", properties: { fourK: { type: "boolean" } }, required: ["fourK"] },
      },
      { asTask: true },
    );
    if (answer.action !== "accept") throw new RemoteError(-32001, "no answer", null, null);
    return { content: [{ type: "text", text: `rendered ${scene} (4K: ${String(answer.content?.["fourK"])})` }] };
  });
  await app.start();

  const connect = async () => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await app!.connect(serverSide);
    const client = new Client({ name: "my-app", version: "1.0.0" });
    const tasks = new TaskClient(client, {
      elicit: async () => ({ action: "accept", content: { fourK: true } }),
      hostTasks: true,
      journal: memoryJournal(),
    });
    await client.connect(clientSide);
    return { client, tasks };
  };
  const first = await connect();
  const progress: number[] = [];
  const call = await first.tasks.callTool(
    "render",
    { scene: "intro" },
    { task: true, ttl: 600_000, onProgress: (p) => progress.push(p.progress) },
  );
  if (call.kind !== "task") throw new Error("expected a task");
  const savedTaskId = call.task.id;
  await first.tasks.close();
  await first.client.close();

  const second = await connect();
  const again = await second.tasks.resume(savedTaskId);
  expect(await again.result()).toMatchObject({ content: [{ type: "text", text: "rendered intro (4K: true)" }] });
  const listed: string[] = [];
  for await (const t of second.tasks.list()) listed.push(t.taskId);
  expect(listed).toContain(savedTaskId);
  await second.tasks.close();
  await second.client.close();
});
