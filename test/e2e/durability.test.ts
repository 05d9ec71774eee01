/**
 * Durable by default: real `mcp-tasks serve` processes on one SQLite file in a
 * temp dir, stopped (SIGTERM) or killed (SIGKILL) and started again, with the SDK client over
 * HTTP as the peer.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CliProcess, killAll } from "../support/cli-process.js";
import { callToolAsTask, expectRpcError, getTask, listAllTasks, taskResult } from "../support/conformance.js";
import { connectHttpClient, type HttpClient } from "../support/http-fixture.js";
import { scrape, valueOf } from "../support/prometheus.js";

const RELATED_TASK = "io.modelcontextprotocol/related-task";
/** recovery.ts: INTERRUPTED_MESSAGE (the process died). */
const DIED = /server stopped while this task was running/;

let dir: string;
const clients: HttpClient[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-e2e-"));
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

/** `serve --demo` on `<dir>/t.db`, port 0; resolves once it listens, with a connected client. */
async function startServer(extra: string[] = []): Promise<{ server: CliProcess; client: HttpClient }> {
  const server = CliProcess.spawn(["serve", "--demo", "--store", `sqlite:${join(dir, "t.db")}`, "--port", "0", ...extra]);
  const client = await connectHttpClient(await server.url());
  clients.push(client);
  return { server, client };
}

describe("durability on SQLite across real processes", { timeout: 90_000 }, () => {
  it("still serves finished results, and replays stored errors, after a restart", async () => {
    const first = await startServer();
    const ok = await callToolAsTask(first.client.client, "sleep", { ms: 10 });
    expect((await taskResult(first.client.client, ok.task.taskId)).content).toEqual([{ type: "text", text: "slept 10 ms" }]);
    const failed = await callToolAsTask(first.client.client, "fail", { message: "bad input" });
    const thrown = await callToolAsTask(first.client.client, "throw", { code: -32042, message: "no luck" });
    await expectRpcError(taskResult(first.client.client, thrown.task.taskId), -32042, "no luck");
    expect((await taskResult(first.client.client, failed.task.taskId)).isError).toBe(true);

    await first.client.close();
    expect(await first.server.kill("SIGTERM")).toEqual({ code: 0, signal: null });

    const second = await startServer();
    const c = second.client.client;
    const result = await taskResult(c, ok.task.taskId);
    expect(result.content).toEqual([{ type: "text", text: "slept 10 ms" }]);
    expect(result._meta?.[RELATED_TASK]).toEqual({ taskId: ok.task.taskId });
    expect(await getTask(c, ok.task.taskId)).toMatchObject({ status: "completed", createdAt: ok.task.createdAt, ttl: ok.task.ttl });

    expect(await getTask(c, failed.task.taskId)).toMatchObject({ status: "failed", statusMessage: "bad input" });
    expect(await taskResult(c, failed.task.taskId)).toMatchObject({ isError: true, content: [{ type: "text", text: "bad input" }] });
    await expectRpcError(taskResult(c, thrown.task.taskId), -32042, "no luck"); // T-RES-4, across processes

    const ids = (await listAllTasks(c)).map((t) => t.taskId);
    expect(ids.sort()).toEqual([ok.task.taskId, failed.task.taskId, thrown.task.taskId].sort());
  });

  it("after kill -9, fails the interrupted sleep with a clear statusMessage and re-runs the retryable batch to completion; nothing stays working", async () => {
    const first = await startServer();
    // 2 s rather than 300 ms: the batch must still be running when the process is killed, even on a loaded machine.
    const batch = await callToolAsTask(first.client.client, "batch", { ms: 2_000 });
    const sleep = await callToolAsTask(first.client.client, "sleep", { ms: 60_000 });
    expect((await getTask(first.client.client, batch.task.taskId)).status).toBe("working");
    // Both handlers have started (a task still queued when the process dies is simply run later).
    const raw = new Database(join(dir, "t.db"), { readonly: true });
    const started = raw.prepare<[string, string], { n: number }>(
      "SELECT count(*) AS n FROM tasks WHERE id IN (?, ?) AND started_at IS NOT NULL",
    );
    await expect.poll(() => started.get(batch.task.taskId, sleep.task.taskId)?.n, { timeout: 10_000 }).toBe(2);
    raw.close();
    expect(await first.server.kill("SIGKILL")).toEqual({ code: null, signal: "SIGKILL" });

    const second = await startServer();
    const c = second.client.client;

    const interrupted = await getTask(c, sleep.task.taskId);
    expect(interrupted.status).toBe("failed");
    expect(interrupted.statusMessage).toMatch(DIED);
    const error = await expectRpcError(taskResult(c, sleep.task.taskId), -32603, DIED);
    expect(error.data).toBeUndefined();

    // The retryable batch runs again from the start and completes; tasks/result waits for it.
    const rerun = await taskResult(c, batch.task.taskId);
    expect(rerun.content).toEqual([{ type: "text", text: "slept 2000 ms" }]);
    expect(rerun._meta?.[RELATED_TASK]).toEqual({ taskId: batch.task.taskId });
    expect((await getTask(c, batch.task.taskId)).status).toBe("completed");

    const tasks = await listAllTasks(c);
    expect(tasks.map((t) => t.taskId).sort()).toEqual([batch.task.taskId, sleep.task.taskId].sort());
    for (const task of tasks) expect(["completed", "failed", "cancelled"]).toContain(task.status);

    // The restart said what it did, in its audit log.
    const audits = second.server.stderr.items.map((l) => [l["audit"], l["taskId"]]);
    expect(audits).toContainEqual(["interrupted", sleep.task.taskId]);
    expect(audits).toContainEqual(["rerun", batch.task.taskId]);
  });

  it("on SIGTERM, drains: both running tasks are handed back (left working in the file, not failed), their waiters told to come back; the retryable one completes after the restart", async () => {
    const first = await startServer(["--drain-timeout", "200"]);
    const batch = await callToolAsTask(first.client.client, "batch", { ms: 1_500 });
    const sleep = await callToolAsTask(first.client.client, "sleep", { ms: 60_000 });
    // Clients waiting on tasks/result are answered before the process exits: "come back later",
    // for tasks that go on after the restart.
    const sleepWait = expectRpcError(taskResult(first.client.client, sleep.task.taskId), -32003, /shutting down; ask again/);
    const batchWait = expectRpcError(taskResult(first.client.client, batch.task.taskId), -32003, /shutting down; ask again/);
    // Both requests held open by the server (a plain JSON answer has no stream to see open first).
    const url = await first.server.url();
    await expect.poll(async () => valueOf(await scrape(url), "mcp_tasks_results_waiting"), { timeout: 10_000 }).toBe(2);
    expect(await first.server.kill("SIGTERM")).toEqual({ code: 0, signal: null });
    // Retryable, with when to ask again: the tasks go on.
    for (const refused of [await sleepWait, await batchWait]) expect(refused.data).toEqual({ reason: "draining", retryAfterMs: 1000 });
    const raw = new Database(join(dir, "t.db"), { readonly: true });
    try {
      const statuses = raw.prepare("SELECT id, status FROM tasks ORDER BY id").all();
      expect(statuses).toEqual(
        [
          { id: batch.task.taskId, status: "working" },
          { id: sleep.task.taskId, status: "working" },
        ].sort((a, b) => (a.id < b.id ? -1 : 1)),
      );
    } finally {
      raw.close();
    }

    // What the next start does with a drained task is recovery's rule (a retryable one re-runs).
    const second = await startServer();
    const c = second.client.client;
    expect((await taskResult(c, batch.task.taskId)).content).toEqual([{ type: "text", text: "slept 1500 ms" }]);
    expect((await getTask(c, sleep.task.taskId)).statusMessage).not.toBe("The server shut down while this task was running");
  });
});
