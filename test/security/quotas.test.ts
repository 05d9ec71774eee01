/**
 * Quotas through the real MCP path: stored tasks per owner, queued input
 * requests per task, result size. Each refusal answers with its documented code, message and data,
 * and nothing already accepted is lost.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ElicitRequestSchema, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { staticTokenVerifier } from "../../src/http/bearer-auth.js";
import type { TaskServer } from "../../src/mcp/task-server.js";
import {
  callToolAsTask,
  captureLogger,
  deferred,
  expectRpcError,
  getTask,
  listAllTasks,
  taskResult,
  wireMessage,
} from "../support/conformance.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { inMemoryFixture, type Fixture, type FixtureOptions } from "../support/in-memory-fixture.js";
import { parseSamples, valueOf } from "../support/prometheus.js";

let fx: Fixture | undefined;
let http: HttpServerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  await http?.close();
  fx = undefined;
  http = undefined;
});

const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });

/** Tools whose handlers the test drives, registered on the fixture's server. */
function quotaTools(app: TaskServer, gate: Promise<void>): void {
  // Runs until the test opens the gate: tasks that are accepted and still working.
  app.tool("gated", { input: z.object({}), taskSupport: "optional" }, async () => {
    await gate;
    return text("done");
  });
  // A result of about `bytes` bytes of JSON.
  app.tool("big", { input: z.object({ chars: z.number() }), taskSupport: "optional" }, async ({ chars }) => text("x".repeat(chars)));
  // A JSON-RPC error whose data is `chars` long.
  app.tool("bigError", { input: z.object({ chars: z.number() }), taskSupport: "optional" }, async ({ chars }) => {
    throw new McpError(-32001, "Upstream failed", { dump: "x".repeat(chars) });
  });
  // Asks `count` questions at once and reports how each one ended.
  app.tool("askAtOnce", { input: z.object({ count: z.number() }), taskSupport: "optional" }, async ({ count }, ctx) => {
    const asked = Array.from({ length: count }, (_, i) =>
      ctx.elicit({ mode: "form", message: `q${i}`, requestedSchema: { type: "object", properties: { a: { type: "string" } } } }),
    );
    const settled = await Promise.allSettled(asked);
    return text(
      JSON.stringify(
        settled.map((s) =>
          s.status === "fulfilled"
            ? { answer: s.value.content?.["a"] }
            : { code: (s.reason as McpError).code, message: (s.reason as Error).message, data: (s.reason as McpError).data },
        ),
      ),
    );
  });
  // Asks `count` questions one after the other.
  app.tool("askInTurn", { input: z.object({ count: z.number() }), taskSupport: "optional" }, async ({ count }, ctx) => {
    const answers: unknown[] = [];
    for (let i = 0; i < count; i++) {
      const answer = await ctx.elicit({
        mode: "form",
        message: `q${i}`,
        requestedSchema: { type: "object", properties: { a: { type: "string" } } },
      });
      answers.push(answer.content?.["a"]);
    }
    return text(JSON.stringify(answers));
  });
  // Asks `count` questions at once and lets a refusal end the handler.
  app.tool("askAllOrFail", { input: z.object({ count: z.number() }), taskSupport: "optional" }, async ({ count }, ctx) => {
    const asked = Array.from({ length: count }, (_, i) =>
      ctx.elicit({ mode: "form", message: `q${i}`, requestedSchema: { type: "object", properties: { a: { type: "string" } } } }),
    );
    await Promise.all(asked);
    return text("all answered");
  });
}

/** An in-memory server with the quota tools; `open()` lets every `gated` handler return. */
async function start(options: FixtureOptions = {}): Promise<{ fx: Fixture; open(): void }> {
  const gate = deferred<void>();
  fx = await inMemoryFixture({ ...options, setup: (app) => quotaTools(app, gate.promise) });
  return { fx, open: () => gate.resolve() };
}

/** Answers every elicitation with its own message, counting them. */
function answerWithMessage(client: Client): { count(): number } {
  let seen = 0;
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    seen++;
    return { action: "accept", content: { a: `answer to ${request.params.message}` } };
  });
  return { count: () => seen };
}

function firstText(result: { content: unknown }): string {
  const [first] = result.content as Array<{ text?: string }>;
  return first?.text ?? "";
}

describe("T-TTL-7: stored tasks per owner", () => {
  it("T-TTL-7: one task more than maxStoredPerOwner is refused with -32600, data {limit, name: stored_tasks}, and creates nothing", async () => {
    const { fx } = await start({ maxStoredPerOwner: 2 });
    await callToolAsTask(fx.client, "gated", {});
    await callToolAsTask(fx.client, "gated", {});
    const error = await expectRpcError(
      callToolAsTask(fx.client, "gated", {}),
      -32600,
      "Too many stored tasks: at most 2 per requestor, finished ones included until their ttl runs out",
    );
    expect(error.data).toEqual({ limit: 2, name: "stored_tasks" });
    expect(await listAllTasks(fx.client)).toHaveLength(2);
  });

  it("T-TTL-7: tasks accepted before the limit was hit finish normally and stay retrievable", async () => {
    const { fx, open } = await start({ maxStoredPerOwner: 2 });
    const accepted = [await callToolAsTask(fx.client, "gated", {}), await callToolAsTask(fx.client, "gated", {})];
    await expectRpcError(callToolAsTask(fx.client, "gated", {}), -32600);
    open();
    for (const { task } of accepted) {
      expect(firstText(await taskResult(fx.client, task.taskId))).toBe("done");
      expect((await getTask(fx.client, task.taskId)).status).toBe("completed");
    }
  });

  it("T-TTL-7: finished tasks count until the sweeper deletes them; after that the requestor may create again", async () => {
    let clock = 1_700_000_000_000;
    const { fx } = await start({ maxStoredPerOwner: 1, now: () => clock, sweepIntervalMs: 3_600_000 });
    const first = await callToolAsTask(fx.client, "big", { chars: 1 }, { ttl: 1000 });
    await taskResult(fx.client, first.task.taskId);
    await expectRpcError(callToolAsTask(fx.client, "big", { chars: 1 }), -32600, /Too many stored tasks/);
    clock += 1000;
    await fx.app.engine.sweep();
    expect((await callToolAsTask(fx.client, "big", { chars: 1 })).task.status).toBe("working");
  });

  it("T-TTL-7, T-SEC-1: the allowance is per owner: another principal can still create tasks", async () => {
    http = await startHttpServer({
      app: { maxStoredPerOwner: 1 },
      http: {
        verifier: staticTokenVerifier(
          new Map([
            ["tok-a", "alice"],
            ["tok-b", "bob"],
          ]),
        ),
      },
    });
    const alice = await http.connect({ token: "tok-a" });
    const bob = await http.connect({ token: "tok-b" });
    await callToolAsTask(alice.client, "sleep", { ms: 0 });
    await expectRpcError(callToolAsTask(alice.client, "sleep", { ms: 0 }), -32600, /at most 1 per requestor/);
    expect((await callToolAsTask(bob.client, "sleep", { ms: 0 })).task.status).toBe("working");
  });

  it("T-TTL-7, T-SEC-2: without authentication every requestor draws on one shared allowance", async () => {
    const { fx } = await start({ maxStoredPerOwner: 1 });
    await callToolAsTask(fx.client, "big", { chars: 1 });
    const other = await fx.connectClient();
    await expectRpcError(callToolAsTask(other, "big", { chars: 1 }), -32600, /Too many stored tasks/);
  });

  it("T-TTL-7, T-SEC-5: a refusal is counted in mcp_tasks_limit_rejections_total and logged as audit limit_hit with the owner", async () => {
    const logger = captureLogger();
    http = await startHttpServer({
      app: { maxStoredPerOwner: 1, logger },
      http: { verifier: staticTokenVerifier(new Map([["tok-a", "alice"]])) },
    });
    const alice = await http.connect({ token: "tok-a" });
    const { task } = await callToolAsTask(alice.client, "sleep", { ms: 0 });
    await expectRpcError(callToolAsTask(alice.client, "sleep", { ms: 0 }), -32600);
    const samples = parseSamples(await http.app.metrics!.registry.metrics());
    expect(valueOf(samples, "mcp_tasks_limit_rejections_total", { limit: "stored_tasks" })).toBe(1);
    // The owner key the server derived for alice (what her tasks are bound to).
    const owner = (await http.app.engine.store.get(task.taskId, { any: true }))?.owner;
    expect(owner).toMatch(/alice/);
    const audit = logger.entries.filter((e) => e.obj["audit"] === "limit_hit");
    expect(audit.map((e) => e.obj)).toEqual([
      { audit: "limit_hit", limit: "stored_tasks", owner, method: "tools/call", peer: "127.0.0.1", taskId: null },
    ]);
  });

  it("T-TTL-7: the active-tasks cap refuses with the same shape: -32600, data {limit, name: active_tasks}", async () => {
    const { fx } = await start({ maxActivePerOwner: 1 });
    await callToolAsTask(fx.client, "gated", {});
    const error = await expectRpcError(callToolAsTask(fx.client, "gated", {}), -32600, "Too many active tasks: at most 1 per requestor");
    expect(error.data).toEqual({ limit: 1, name: "active_tasks" });
  });
});

describe("T-TTL-7, T-INPUT: queued input requests per task", () => {
  it("T-INPUT-1: the request beyond maxQueuedInputs rejects inside the handler while the first ones are delivered and answered", async () => {
    const { fx } = await start({ maxQueuedInputs: 2 });
    const asked = answerWithMessage(fx.client);
    const { task } = await callToolAsTask(fx.client, "askAtOnce", { count: 3 });
    const outcomes = JSON.parse(firstText(await taskResult(fx.client, task.taskId))) as unknown[];
    expect(outcomes).toEqual([
      { answer: "answer to q0" },
      { answer: "answer to q1" },
      { code: -32603, message: "Too many queued input requests: at most 2 per task", data: { limit: 2, name: "queued_inputs" } },
    ]);
    expect(asked.count()).toBe(2);
    // The refused request was never queued.
    expect(await fx.app.engine.store.inputs(task.taskId)).toHaveLength(2);
    expect((await getTask(fx.client, task.taskId)).status).toBe("completed");
  });

  it("T-INPUT-4: an answered request frees its place: a handler asking one question at a time is never refused", async () => {
    const { fx } = await start({ maxQueuedInputs: 1 });
    answerWithMessage(fx.client);
    const { task } = await callToolAsTask(fx.client, "askInTurn", { count: 3 });
    expect(JSON.parse(firstText(await taskResult(fx.client, task.taskId)))).toEqual(["answer to q0", "answer to q1", "answer to q2"]);
  });

  it("T-RES-4: a handler that lets the refusal escape fails its task with that message; tasks/result replays it as -32603 with data", async () => {
    const { fx } = await start({ maxQueuedInputs: 1 });
    answerWithMessage(fx.client);
    const { task } = await callToolAsTask(fx.client, "askAllOrFail", { count: 2 });
    const error = await expectRpcError(taskResult(fx.client, task.taskId), -32603, "Too many queued input requests: at most 1 per task");
    expect(error.data).toEqual({ limit: 1, name: "queued_inputs" });
    const failed = await getTask(fx.client, task.taskId);
    expect(failed.status).toBe("failed");
    expect(failed.statusMessage).toBe("Too many queued input requests: at most 1 per task");
  });

  it("T-SEC-5: the refusal is counted and logged as audit limit_hit with the task id", async () => {
    const logger = captureLogger();
    const { fx } = await start({ maxQueuedInputs: 1, logger });
    answerWithMessage(fx.client);
    const { task } = await callToolAsTask(fx.client, "askAtOnce", { count: 2 });
    await taskResult(fx.client, task.taskId);
    const samples = parseSamples(await fx.app.metrics!.registry.metrics());
    expect(valueOf(samples, "mcp_tasks_limit_rejections_total", { limit: "queued_inputs" })).toBe(1);
    const audit = logger.entries.filter((e) => e.obj["audit"] === "limit_hit").map((e) => e.obj);
    expect(audit).toEqual([
      { audit: "limit_hit", limit: "queued_inputs", owner: null, method: "tools/call", peer: null, taskId: task.taskId },
    ]);
  });
});

describe("T-TTL-7: result size", () => {
  /** JSON bytes of the CallToolResult `big` returns for `chars` characters. */
  const resultBytes = (chars: number): number => Buffer.byteLength(JSON.stringify(text("x".repeat(chars))));

  it("T-LIFE-4: a result larger than maxResultBytes fails the task with 'Result exceeds N bytes'; tasks/result answers -32603 with {limit, name, bytes}", async () => {
    const { fx } = await start({ maxResultBytes: 1000 });
    const { task } = await callToolAsTask(fx.client, "big", { chars: 5000 });
    const error = await expectRpcError(taskResult(fx.client, task.taskId), -32603, "Result exceeds 1000 bytes");
    expect(error.data).toEqual({ limit: 1000, name: "result_bytes", bytes: resultBytes(5000) });
    const failed = await getTask(fx.client, task.taskId);
    expect(failed.status).toBe("failed");
    expect(failed.statusMessage).toBe("Result exceeds 1000 bytes");
  });

  it("T-TTL-7: the oversized payload is never stored: the task's row holds only the error", async () => {
    const { fx } = await start({ maxResultBytes: 1000 });
    const { task } = await callToolAsTask(fx.client, "big", { chars: 5000 });
    await expectRpcError(taskResult(fx.client, task.taskId), -32603);
    const row = await fx.app.engine.store.get(task.taskId, { any: true });
    expect(row?.outcome).toEqual({
      kind: "error",
      error: { code: -32603, message: "Result exceeds 1000 bytes", data: { limit: 1000, name: "result_bytes", bytes: resultBytes(5000) } },
    });
    expect(JSON.stringify(row)).not.toContain("xxxxxxxxxx");
  });

  it("T-RES-2: a result of exactly maxResultBytes is stored and returned unchanged", async () => {
    const limit = 1000;
    const chars = limit - resultBytes(0);
    expect(resultBytes(chars)).toBe(limit);
    const { fx } = await start({ maxResultBytes: limit });
    const { task } = await callToolAsTask(fx.client, "big", { chars });
    expect(firstText(await taskResult(fx.client, task.taskId))).toBe("x".repeat(chars));
    expect((await getTask(fx.client, task.taskId)).status).toBe("completed");
  });

  it("T-RES-4: an oversized JSON-RPC error a handler throws is replaced the same way", async () => {
    const { fx } = await start({ maxResultBytes: 1000 });
    const { task } = await callToolAsTask(fx.client, "bigError", { chars: 5000 });
    const error = await expectRpcError(taskResult(fx.client, task.taskId), -32603, "Result exceeds 1000 bytes");
    expect(error.data).toMatchObject({ limit: 1000, name: "result_bytes" });
    expect(wireMessage(error)).not.toContain("Upstream");
  });

  it("T-SEC-5: the refusal is counted and logged as audit limit_hit with the task id", async () => {
    const logger = captureLogger();
    const { fx } = await start({ maxResultBytes: 1000, logger });
    const { task } = await callToolAsTask(fx.client, "big", { chars: 5000 });
    await expectRpcError(taskResult(fx.client, task.taskId), -32603);
    const samples = parseSamples(await fx.app.metrics!.registry.metrics());
    expect(valueOf(samples, "mcp_tasks_limit_rejections_total", { limit: "result_bytes" })).toBe(1);
    const audit = logger.entries.filter((e) => e.obj["audit"] === "limit_hit").map((e) => e.obj);
    expect(audit).toEqual([
      { audit: "limit_hit", limit: "result_bytes", owner: null, method: "tools/call", peer: null, taskId: task.taskId },
    ]);
  });
});
