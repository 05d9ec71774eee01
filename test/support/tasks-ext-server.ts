/**
 * The server the 2026-07-28 tests talk to: the conformance fixture tools (Appendix B) plus a few
 * probes, over real Streamable HTTP on 127.0.0.1 (port 0), on a real SQLite file by default.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { registerConformanceTools } from "../../src/demo/conformance-tools.js";
import { serveHttp, type HttpHandle, type HttpOptions } from "../../src/http/http-server.js";
import { createTaskServer, type TaskServer, type TaskServerOptions } from "../../src/mcp/task-server.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";

export interface TasksExtServer {
  app: TaskServer;
  http: HttpHandle;
  url: URL;
  /** How many times each probe's handler started. */
  runs: Map<string, number>;
  close(): Promise<void>;
}

export async function startTasksExtServer(options: { app?: Partial<TaskServerOptions>; http?: HttpOptions } = {}): Promise<TasksExtServer> {
  const dir = options.app?.store ? null : mkdtempSync(join(tmpdir(), "mcp-tasks-ext-"));
  const app = createTaskServer({
    name: "tasks-ext-test",
    version: "0.0.0",
    rateLimit: "off",
    failedLookups: "off",
    ...options.app,
    store: options.app?.store ?? sqliteStore(join(dir ?? tmpdir(), "tasks.db")),
  });
  registerConformanceTools(app);
  const runs = new Map<string, number>();
  const count = (name: string): void => void runs.set(name, (runs.get(name) ?? 0) + 1);
  app.tool("count_required", { input: z.object({}), taskSupport: "required" }, async () => {
    count("count_required");
    return { content: [{ type: "text", text: "counted" }] };
  });
  app.tool("wait_ms", { input: z.object({ ms: z.number().int().min(0) }), taskSupport: "optional" }, async ({ ms }, ctx) => {
    count("wait_ms");
    await new Promise((resolve) => setTimeout(resolve, ms));
    ctx.signal.throwIfAborted();
    return { content: [{ type: "text", text: `waited ${ms} ms` }] };
  });
  app.tool("wait_forbidden", { input: z.object({ ms: z.number().int().min(0) }) }, async ({ ms }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { content: [{ type: "text", text: `waited ${ms} ms plainly` }] };
  });
  app.tool("progress_plain", { input: z.object({ steps: z.number().int().min(1) }) }, async ({ steps }, ctx) => {
    for (let i = 1; i <= steps; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      ctx.progress(i, steps, `step ${i}`);
    }
    return { content: [{ type: "text", text: `${steps} steps` }] };
  });
  app.tool("progress_task", { input: z.object({ steps: z.number().int().min(1) }), taskSupport: "required" }, async ({ steps }, ctx) => {
    for (let i = 1; i <= steps; i++) {
      ctx.progress(i, steps, `step ${i}`);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    return { content: [{ type: "text", text: `${steps} steps` }] };
  });
  app.tool("ask_optional", { input: z.object({}), taskSupport: "optional" }, async (_args, ctx) => {
    const answer = await ctx.elicit({
      mode: "form",
      message: "ok?",
      requestedSchema: { type: "object", properties: { ok: { type: "boolean" } } },
    });
    return { content: [{ type: "text", text: answer.action }] };
  });
  const nameForm = {
    mode: "form" as const,
    message: "Name?",
    requestedSchema: { type: "object" as const, properties: { name: { type: "string" as const } }, required: ["name"] },
  };
  app.tool("ask_plain", { input: z.object({ greeting: z.string() }) }, async ({ greeting }, ctx) => {
    count("ask_plain");
    const who = await ctx.elicit(nameForm);
    const sure = await ctx.elicit({
      mode: "form",
      message: "Sure?",
      requestedSchema: { type: "object", properties: { sure: { type: "boolean" } } },
    });
    return {
      content: [
        { type: "text", text: `${greeting} ${String(who.content?.["name"])} (${sure.content?.["sure"] === true ? "sure" : "unsure"})` },
      ],
    };
  });
  app.tool(
    "gather_optional",
    {
      input: z.object({}),
      taskSupport: "optional",
      gather: async (_args, ctx) => String((await ctx.elicit(nameForm)).content?.["name"] ?? ""),
    },
    async (_args, ctx) => ({ content: [{ type: "text", text: `gathered ${String(ctx.gathered)}` }] }),
  );
  app.tool("related_meta", { input: z.object({}), taskSupport: "required" }, async () => ({
    content: [{ type: "text", text: "with meta" }],
    _meta: { "io.modelcontextprotocol/related-task": { taskId: "x" }, "example.com/kept": 1 },
  }));
  const http = await serveHttp(app, { port: 0, host: "127.0.0.1", ...options.http });
  return {
    app,
    http,
    url: new URL(http.url),
    runs,
    async close() {
      await http.close();
      await app.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
