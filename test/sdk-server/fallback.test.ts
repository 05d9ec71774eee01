/**
 * The fallback for hosts without tasks (docs/hosts/README.md) on an SDK
 * McpServer given tasks with withTasks: the real SDK McpServer over its own
 * StreamableHTTPServerTransport (fixtures/http-server.ts), a real SQLite file, and a plain SDK
 * Client that declares no task support. A marked tool's plain call runs as a task answered inline
 * within backgroundAfterMs, else with the background CallToolResult naming the task; the task_*
 * tools follow it, owner-bound. The same code as TaskServer's (src/mcp/fallback), reached
 * through the McpServer's own tools/list and tools/call.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  ElicitResultSchema,
  ListToolsResultSchema,
  type CallToolResult,
  type ClientCapabilities,
  type Progress,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { sqliteStore } from "../../src/exports/sqlite.js";
import type { SdkTasksOptions } from "../../src/exports/sdk.js";
import { callTool, expectRpcError, RELATED_TASK } from "../support/conformance.js";
import { startSdkHttpApp, type SdkHttpApp } from "./fixtures/http-server.js";

const dir = mkdtempSync(join(tmpdir(), "sdk-server-fallback-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

const BACKGROUND_AFTER_MS = 600;
const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });

/** Task ids whose callback saw its extra.signal abort. */
const aborted: string[] = [];

/** A server written the SDK's way: a slow tool that can be cancelled, a question, a plain tool. */
function buildServer(options: { ownTaskList?: boolean } = {}): McpServer {
  const server = new McpServer({ name: "sdk-fallback-app", version: "1.0.0" });
  server.registerTool("slow", { inputSchema: { ms: z.number().int().min(0) } }, async ({ ms }, extra) => {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      extra.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        if (extra.taskId !== undefined) aborted.push(extra.taskId);
        resolve();
      });
    });
    return text(`slept ${ms} ms`);
  });
  server.registerTool("ask", { inputSchema: { question: z.string() } }, async ({ question }, extra) => {
    const answer = await extra.sendRequest(
      {
        method: "elicitation/create",
        params: {
          mode: "form",
          message: question,
          requestedSchema: { type: "object", properties: { answer: { type: "string" } }, required: ["answer"] },
        },
      },
      ElicitResultSchema,
    );
    return text(answer.action === "accept" ? `answer: ${String(answer.content?.["answer"])}` : answer.action);
  });
  server.registerTool("echo", { inputSchema: { message: z.string() } }, async ({ message }) => text(`echo: ${message}`));
  if (options.ownTaskList) server.registerTool("task_list", {}, async () => text("the server's own task_list"));
  return server;
}

const TOOLS: SdkTasksOptions["tools"] = { slow: { taskSupport: "optional" }, ask: { taskSupport: "required" } };

const apps: SdkHttpApp[] = [];
const clients: Client[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => {});
  for (const app of apps.splice(0)) await app.close();
});

async function startApp(options: Partial<SdkTasksOptions> = {}, server: () => McpServer = () => buildServer()): Promise<SdkHttpApp> {
  const app = await startSdkHttpApp(
    { store: sqliteStore(join(dir, `tasks-${++files}.db`)), pollIntervalMs: 50, backgroundAfterMs: BACKGROUND_AFTER_MS, ...options },
    { build: server, tools: TOOLS },
  );
  apps.push(app);
  return app;
}

/** A plain SDK client: by default it declares no task support (nor anything else). */
async function clientOf(app: SdkHttpApp, options: { capabilities?: ClientCapabilities; principal?: string } = {}): Promise<Client> {
  const headers: Record<string, string> = options.principal === undefined ? {} : { "x-principal": options.principal };
  const client = new Client({ name: "plain-host", version: "0.0.0" }, { capabilities: options.capabilities ?? {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(app.url), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

interface Summary {
  taskId: string;
  status: string;
  tool?: string;
  pollWith?: string;
  questions?: string[];
}

const summaryOf = (result: CallToolResult): Summary => result.structuredContent as unknown as Summary;

describe("withTasks: the fallback for a client without task support", { timeout: 30_000 }, () => {
  it("lists task_status, task_result, task_cancel and task_list beside the server's tools, to such clients only", async () => {
    const app = await startApp();
    const plain = await clientOf(app);
    const { tools } = await plain.request({ method: "tools/list", params: {} }, ListToolsResultSchema);
    expect(Object.fromEntries(tools.map((t) => [t.name, t.execution?.taskSupport]))).toEqual({
      slow: "optional",
      ask: "required",
      echo: "forbidden",
      task_status: "forbidden",
      task_result: "forbidden",
      task_cancel: "forbidden",
      task_list: "forbidden",
    });
    const aware = await clientOf(app, { capabilities: { tasks: {} } });
    const listed = await aware.request({ method: "tools/list", params: {} }, ListToolsResultSchema);
    expect(listed.tools.map((t) => t.name).sort()).toEqual(["ask", "echo", "slow"]);
  });

  it("answers a marked tool's plain call inline when it ends within backgroundAfterMs, having run it as a task", async () => {
    const app = await startApp();
    const client = await clientOf(app);
    expect(await callTool(client, "slow", { ms: 10 })).toEqual(text("slept 10 ms"));
    // It was a durable task of this caller, now completed.
    const listed = await callTool(client, "task_list", {});
    const tasks = (listed.structuredContent as { tasks: Summary[] }).tasks;
    expect(tasks).toEqual([expect.objectContaining({ tool: "slow", status: "completed" })]);
    // An unmarked tool still runs as the SDK runs it, and no task is made for it.
    expect(await callTool(client, "echo", { message: "plain" })).toEqual(text("echo: plain"));
    expect(((await callTool(client, "task_list", {})).structuredContent as { tasks: Summary[] }).tasks).toHaveLength(1);
  });

  it("answers a slow call with the background CallToolResult naming its task; task_status and task_result follow it to the callback's result", async () => {
    const app = await startApp();
    const client = await clientOf(app);
    const started = Date.now();
    const background = await callTool(client, "slow", { ms: 2500 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(BACKGROUND_AFTER_MS - 50);
    const summary = summaryOf(background);
    expect(summary).toMatchObject({ status: "working", tool: "slow", pollWith: "task_result" });
    expect(background.isError).toBeUndefined();
    expect(JSON.stringify(background.content)).toContain(`task ${summary.taskId}`);
    expect(summaryOf(await callTool(client, "task_status", { taskId: summary.taskId }))).toMatchObject({
      taskId: summary.taskId,
      status: "working",
    });
    const result = await callTool(client, "task_result", { taskId: summary.taskId });
    expect(result.content).toEqual(text("slept 2500 ms").content);
    expect(result._meta?.[RELATED_TASK]).toBeUndefined();
  });

  it("cancels a background task with task_cancel: the callback's extra.signal aborts; a second task_cancel is a tool error", async () => {
    const app = await startApp();
    const client = await clientOf(app);
    const { taskId } = summaryOf(await callTool(client, "slow", { ms: 60_000 }));
    const cancelled = await callTool(client, "task_cancel", { taskId });
    expect(summaryOf(cancelled)).toMatchObject({ taskId, status: "cancelled" });
    await expect.poll(() => aborted.includes(taskId), { timeout: 10_000 }).toBe(true);
    const again = await callTool(client, "task_cancel", { taskId });
    expect(again.isError).toBe(true);
    expect(summaryOf(again)).toMatchObject({ status: "cancelled" });
  });

  it("sends keep-alive progress to a waiting plain call that sent a progressToken", async () => {
    const app = await startApp({ keepAliveMs: 100 });
    const client = await clientOf(app);
    const progress: Progress[] = [];
    const background = await client.request(
      { method: "tools/call", params: { name: "slow", arguments: { ms: 5000 } } },
      CallToolResultSchema,
      { onprogress: (p) => void progress.push(p) },
    );
    const { taskId } = summaryOf(background);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.map((p) => p.progress)).toEqual(progress.map((_, i) => i + 1));
    expect(progress[0]?.message).toBe(`Still running (task ${taskId})`);
    await callTool(client, "task_cancel", { taskId });
  });

  it("binds background tasks to the principal: another principal's task_status of its id is -32602, and its task_list is empty", async () => {
    const app = await startApp();
    const alice = await clientOf(app, { principal: "alice" });
    const bob = await clientOf(app, { principal: "bob" });
    const { taskId } = summaryOf(await callTool(alice, "slow", { ms: 60_000 }));
    await expectRpcError(callTool(bob, "task_status", { taskId }), -32602);
    await expectRpcError(callTool(bob, "task_result", { taskId }), -32602);
    expect(((await callTool(bob, "task_list", {})).structuredContent as { tasks: unknown[] }).tasks).toEqual([]);
    expect(summaryOf(await callTool(alice, "task_cancel", { taskId }))).toMatchObject({ status: "cancelled" });
  });

  it('refuses a plain call of a "required" tool with -32601 by default (T-TOOL-4)', async () => {
    const app = await startApp();
    const client = await clientOf(app, { capabilities: { elicitation: { form: {} } } });
    await expectRpcError(callTool(client, "ask", { question: "?" }), -32601);
  });

  it("with fallbackRequired, runs a required tool for such a client and relays its question on the call's own stream", async () => {
    const app = await startApp({ fallbackRequired: true });
    const client = await clientOf(app, { capabilities: { elicitation: { form: {} } } });
    const asked: unknown[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      // The clock stops while a question is out: answering later than backgroundAfterMs is fine.
      await new Promise((resolve) => setTimeout(resolve, BACKGROUND_AFTER_MS + 200));
      return { action: "accept", content: { answer: "forty-two" } };
    });
    expect(await callTool(client, "ask", { question: "The answer?" })).toEqual(text("answer: forty-two"));
    expect(asked).toEqual(["The answer?"]);
  });

  it("a tool of the McpServer named like one of ours wins: it is listed and called, ours is not offered", async () => {
    const app = await startApp({}, () => buildServer({ ownTaskList: true }));
    const client = await clientOf(app);
    const { tools } = await client.request({ method: "tools/list", params: {} }, ListToolsResultSchema);
    expect(tools.filter((t) => t.name === "task_list")).toHaveLength(1);
    expect(await callTool(client, "task_list", {})).toEqual(text("the server's own task_list"));
  });

  it("backgroundAfterMs: null switches it off: no task_* tools, plain calls run as the SDK runs them", async () => {
    const app = await startApp({ backgroundAfterMs: null });
    const client = await clientOf(app);
    const { tools } = await client.request({ method: "tools/list", params: {} }, ListToolsResultSchema);
    expect(tools.map((t) => t.name).sort()).toEqual(["ask", "echo", "slow"]);
    expect(await callTool(client, "slow", { ms: BACKGROUND_AFTER_MS + 300 })).toEqual(text(`slept ${BACKGROUND_AFTER_MS + 300} ms`));
    // The SDK's own answer for a tool it does not have.
    expect(await callTool(client, "task_list", {})).toMatchObject({
      isError: true,
      content: [{ type: "text", text: expect.stringContaining("Tool task_list not found") }],
    });
  });
});
