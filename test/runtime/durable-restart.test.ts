/**
 * Durable execution across real processes (docs/durable-execution.md): `mcp-tasks serve --demo`
 * on one SQLite file, killed with SIGKILL in the middle of a task and started again on the same
 * file, with the official SDK client over HTTP as the requestor.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { ElicitRequestSchema, type ElicitRequest } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CliProcess, killAll } from "../support/cli-process.js";
import { callToolAsTask, getTask, taskResult } from "../support/conformance.js";
import { connectHttpClient, type HttpClient } from "../support/http-fixture.js";

let dir: string;
const clients: HttpClient[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-durable-e2e-"));
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

const dbPath = (): string => join(dir, "t.db");

async function startServer(): Promise<{ server: CliProcess; client: HttpClient }> {
  const server = CliProcess.spawn(["serve", "--demo", "--store", `sqlite:${dbPath()}`, "--port", "0"]);
  const client = await connectHttpClient(await server.url());
  clients.push(client);
  return { server, client };
}

/** Reads the store's file directly (a second connection, read-only): how far the task got. */
function countRows(table: "task_checkpoints" | "task_inputs", taskId: string): number {
  const db = new Database(dbPath(), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM ${table} WHERE task_id = ?`).get(taskId) as { n: number }).n;
  } finally {
    db.close();
  }
}

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("durable execution across kill -9 on SQLite", { timeout: 90_000 }, () => {
  it("a steps task killed mid-run completes after the restart, with the checkpointed steps restored, not re-run", async () => {
    const first = await startServer();
    const count = 40;
    const created = await callToolAsTask(first.client.client, "steps", { count, ms: 100 });
    const taskId = created.task.taskId;
    await until(() => countRows("task_checkpoints", taskId) >= 3, "three checkpointed steps");
    expect(await first.server.kill("SIGKILL")).toEqual({ code: null, signal: "SIGKILL" });
    const kept = countRows("task_checkpoints", taskId);

    const second = await startServer();
    const result = await taskResult(second.client.client, taskId);
    const summary = result.structuredContent as { count: number; ran: number; restored: number };
    expect(summary.count).toBe(count);
    expect(summary.restored).toBeGreaterThanOrEqual(kept);
    expect(summary.restored).toBeGreaterThan(0);
    expect(summary.ran + summary.restored).toBe(count);
    expect(countRows("task_checkpoints", taskId)).toBe(count);
    expect((await getTask(second.client.client, taskId)).status).toBe("completed");
    const audits = second.server.stderr.items.map((l) => [l["audit"], l["taskId"]]);
    expect(audits).toContainEqual(["resumed", taskId]);
  });

  it("an ask waiting for its answer survives kill -9: the same question is delivered again on tasks/result and its answer completes the task", async () => {
    const first = await startServer();
    const created = await callToolAsTask(first.client.client, "ask", { question: "Favourite colour?" });
    const taskId = created.task.taskId;
    await until(async () => (await getTask(first.client.client, taskId)).status === "input_required", "the task to wait for input");
    expect(await first.server.kill("SIGKILL")).toEqual({ code: null, signal: "SIGKILL" });

    const second = await startServer();
    const asked: ElicitRequest["params"][] = [];
    second.client.client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return { action: "accept", content: { answer: "teal" } };
    });
    const result = await taskResult(second.client.client, taskId);
    expect(result.content).toEqual([{ type: "text", text: "answer: teal" }]);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ message: "Favourite colour?" });
    // Re-attached, not asked twice: the store holds the one request, now answered.
    expect(countRows("task_inputs", taskId)).toBe(1);
    expect((await getTask(second.client.client, taskId)).status).toBe("completed");
  });
});
