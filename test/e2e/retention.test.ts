/**
 * Retention (docs/limits.md#retention) over real HTTP on a SQLite file, in both eras from one
 * table of cases: a task past its retention answers -32602 saying it expired — before and after
 * the sweeper deleted it — never another status than it ended in; `keepFinishedMs` keeps a
 * finished task past its ttl; /metrics counts results that expired unread and results fetched.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CreateTaskResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import { randomUUID } from "node:crypto";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { isTerminal } from "../../src/core/task-status.js";
import { callToolAsTask, cancelTask, getTask, taskResult } from "../support/conformance.js";
import { startHttpServer, type HttpClient, type HttpServerFixture } from "../support/http-fixture.js";
import { statelessRpc } from "../support/stateless-client.js";
import { scrape, valueOf } from "../support/prometheus.js";

const TTL_MS = 5_000;
const KEEP_FINISHED_MS = 60_000;

interface Answer {
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/** One era's requests about a task. */
interface Era {
  name: string;
  /** Starts a task of the demo `sleep` tool (the server's default ttl), under an idempotency key if given, and returns its id. */
  create(ms: number, key?: string): Promise<string>;
  get(taskId: string): Promise<Answer>;
  /** The request that delivers a finished task's result: 2025-11-25 tasks/result, 2026-07-28 tasks/get. */
  fetch(taskId: string): Promise<Answer>;
  cancel(taskId: string): Promise<Answer>;
  /** 2026-07-28 tasks/update; absent in 2025-11-25. */
  update?(taskId: string): Promise<Answer>;
  /** The status a read answer shows. */
  statusOf(answer: Answer): unknown;
}

let fx: HttpServerFixture;
let client: HttpClient;
let dir: string;
let offset = 0;
const advance = (ms: number): void => {
  offset += ms;
};

async function sdk(request: Promise<Record<string, unknown>>): Promise<Answer> {
  try {
    return { result: await request };
  } catch (error) {
    if (error instanceof McpError) return { error: { code: error.code, message: error.message } };
    throw error;
  }
}

async function raw(method: string, params: Record<string, unknown>): Promise<Answer> {
  const { body } = await statelessRpc(fx.url, method, params);
  return { ...(body.result && { result: body.result }), ...(body.error && { error: body.error }) };
}

const ERAS: Era[] = [
  {
    name: "2025-11-25",
    create: async (ms, key) => {
      const params = { name: "sleep", arguments: { ms }, task: {}, ...(key !== undefined && { idempotencyKey: key }) };
      return (await client.client.request({ method: "tools/call", params }, CreateTaskResultSchema)).task.taskId;
    },
    get: (taskId) => sdk(getTask(client.client, taskId)),
    fetch: (taskId) => sdk(taskResult(client.client, taskId)),
    cancel: (taskId) => sdk(cancelTask(client.client, taskId)),
    statusOf: (answer) => answer.result?.["status"],
  },
  {
    name: "2026-07-28",
    create: async (ms, key) => {
      const answer = await raw("tools/call", { name: "sleep", arguments: { ms }, ...(key !== undefined && { idempotencyKey: key }) });
      return String(answer.result?.["taskId"]);
    },
    get: (taskId) => raw("tasks/get", { taskId }),
    fetch: (taskId) => raw("tasks/get", { taskId }),
    cancel: (taskId) => raw("tasks/cancel", { taskId }),
    update: (taskId) => raw("tasks/update", { taskId, inputResponses: {} }),
    statusOf: (answer) => answer.result?.["status"],
  },
];

/** Waits until the task has finished, reading the store (no request that would count as a fetch). */
async function finished(taskId: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const task = await fx.app.engine.store.get(taskId, { any: true });
    if (task && isTerminal(task.status)) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`task ${taskId} did not finish`);
}

function expectExpired(answer: Answer): void {
  expect(answer.error?.code).toBe(-32602);
  expect(answer.error?.message).toMatch(/expired/i);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-retention-"));
  fx = await startHttpServer({
    app: {
      store: sqliteStore(join(dir, "tasks.db")),
      now: () => Date.now() + offset,
      // The sweeper runs when a test calls engine.sweep(), at the clock the test set.
      sweepIntervalMs: 3_600_000,
      ttl: { defaultTtlMs: TTL_MS },
      keepFinishedMs: KEEP_FINISHED_MS,
      inlineWaitMs: 0,
      rateLimit: "off",
      failedLookups: "off",
    },
  });
  client = await fx.connect();
});

afterAll(async () => {
  await fx?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(ERAS)("retention ($name)", (era) => {
  it("a finished task's result stays fetchable past its ttl for keepFinishedMs after it ended (--keep-finished)", async () => {
    const taskId = await era.create(0);
    await finished(taskId);
    advance(TTL_MS + 1_000);
    await fx.app.engine.sweep();
    const answer = await era.fetch(taskId);
    expect(answer.error).toBeUndefined();
    expect(answer.result).toBeDefined();
    expect(era.statusOf(await era.get(taskId))).toBe("completed");
  });

  it("T-ERR-7: a task past its retention answers -32602 'expired' to every request about it, and is never reported cancelled", async () => {
    const taskId = await era.create(0);
    await finished(taskId);
    advance(KEEP_FINISHED_MS + 1);
    expectExpired(await era.get(taskId));
    expectExpired(await era.fetch(taskId));
    expectExpired(await era.cancel(taskId));
    if (era.update) expectExpired(await era.update(taskId));
    expect((await fx.app.engine.store.get(taskId, { any: true }))?.status).toBe("completed");
  });

  it("T-ERR-7: once the sweeper deleted it, the task's id still answers -32602 'expired'", async () => {
    const taskId = await era.create(0);
    await finished(taskId);
    advance(KEEP_FINISHED_MS + 1);
    await fx.app.engine.sweep();
    expect(await fx.app.engine.store.get(taskId, { any: true })).toBeNull();
    expectExpired(await era.get(taskId));
    expectExpired(await era.fetch(taskId));
    expectExpired(await era.cancel(taskId));
    if (era.update) expectExpired(await era.update(taskId));
  });

  it("a task still running at its ttl reads as it is until the sweeper fails it, then keeps that failure for keepFinishedMs, and its key names it throughout", async () => {
    const key = `ttl-${randomUUID()}`;
    const taskId = await era.create(60_000, key);
    advance(TTL_MS + 1_000);
    // Past its ttl, before the sweeper's pass: still the running task, under its key.
    expect(era.statusOf(await era.get(taskId))).toBe("working");
    expect(await era.create(60_000, key)).toBe(taskId);
    await fx.app.engine.sweep();
    const failed = await era.get(taskId);
    expect(era.statusOf(failed)).toBe("failed");
    expect(failed.result?.["statusMessage"]).toMatch(/ttl of 5000 ms elapsed before it finished/);
    advance(KEEP_FINISHED_MS - 1_000);
    expect(era.statusOf(await era.get(taskId))).toBe("failed");
    // The key still names the failed task: a retry is answered with it, the work not run again.
    expect(await era.create(60_000, key)).toBe(taskId);
    expect(await fx.app.engine.store.get(taskId, { any: true })).toMatchObject({ status: "failed" });
  });

  it("T-ERR-1: an id never seen still answers -32602 'not found'", async () => {
    const answer = await era.get(randomUUID());
    expect(answer.error?.code).toBe(-32602);
    expect(answer.error?.message).toMatch(/not found/i);
    expect(answer.error?.message).not.toMatch(/expired/i);
  });

  it("a result nobody fetched is counted in mcp_tasks_results_expired_unread_total when its retention ends", async () => {
    await sweepEarlierTasks();
    const before = await scrape(fx.url);
    const taskId = await era.create(0);
    await finished(taskId);
    advance(KEEP_FINISHED_MS + 1);
    await fx.app.engine.sweep();
    const after = await scrape(fx.url);
    expect(valueOf(after, "mcp_tasks_results_expired_unread_total") - valueOf(before, "mcp_tasks_results_expired_unread_total")).toBe(1);
    expect(valueOf(after, "mcp_tasks_results_fetched_total") - valueOf(before, "mcp_tasks_results_fetched_total")).toBe(0);
  });

  it("a fetched result is counted once in mcp_tasks_results_fetched_total, and not as expired unread", async () => {
    await sweepEarlierTasks();
    const before = await scrape(fx.url);
    const taskId = await era.create(0);
    await finished(taskId);
    expect((await era.fetch(taskId)).error).toBeUndefined();
    expect((await era.fetch(taskId)).error).toBeUndefined();
    await waitForFetched(before, 1);
    advance(KEEP_FINISHED_MS + 1);
    await fx.app.engine.sweep();
    const after = await scrape(fx.url);
    expect(valueOf(after, "mcp_tasks_results_fetched_total") - valueOf(before, "mcp_tasks_results_fetched_total")).toBe(1);
    expect(valueOf(after, "mcp_tasks_results_expired_unread_total") - valueOf(before, "mcp_tasks_results_expired_unread_total")).toBe(0);
  });
});

/** Ends the retention of the tasks earlier tests left, so a counter's change is this test's alone. */
async function sweepEarlierTasks(): Promise<void> {
  advance(KEEP_FINISHED_MS + 1);
  await fx.app.engine.sweep();
}

/** The fetched mark is written after the answer goes out: waits until /metrics shows it. */
async function waitForFetched(before: Awaited<ReturnType<typeof scrape>>, delta: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const now = await scrape(fx.url);
    if (valueOf(now, "mcp_tasks_results_fetched_total") - valueOf(before, "mcp_tasks_results_fetched_total") >= delta) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error("the fetched result was not counted");
}

describe("a blocked tasks/result on a task still running at its ttl (2025-11-25: the only era with a blocking result request)", () => {
  it("waits on past the ttl and answers the failure the sweeper writes, never 'expired'", async () => {
    const shortDir = mkdtempSync(join(tmpdir(), "mcp-tasks-retention-short-"));
    const server = await startHttpServer({
      app: {
        store: sqliteStore(join(shortDir, "tasks.db")),
        sweepIntervalMs: 3_600_000,
        ttl: { defaultTtlMs: 1_000 },
        keepFinishedMs: KEEP_FINISHED_MS,
      },
    });
    try {
      const requestor = await server.connect();
      const taskId = (await callToolAsTask(requestor.client, "sleep", { ms: 60_000 })).task.taskId;
      const waiting = sdk(taskResult(requestor.client, taskId));
      let settled = false;
      void waiting.then(() => (settled = true));
      // Well past the ttl, with no sweep yet: the request still waits.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(settled).toBe(false);
      await server.app.engine.sweep();
      const answer = await waiting;
      expect(answer.error?.message ?? JSON.stringify(answer.result)).toMatch(/ttl of 1000 ms elapsed before it finished/);
      expect(answer.error?.message ?? "").not.toMatch(/has expired/);
    } finally {
      await server.close();
      rmSync(shortDir, { recursive: true, force: true });
    }
  });
});
