/**
 * SIGTERM drains `mcp-tasks serve --demo` on a SQLite file, in real processes
 * with the SDK client over HTTP: a task that ends within the grace period completes; one that does
 * not is handed back — left active in the file, never failed — and the next start takes it over;
 * while draining, new tasks are refused with -32003 and /readyz says "draining"; a second signal
 * stops at once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CliProcess, killAll, runCli } from "../support/cli-process.js";
import { callToolAsTask, expectRpcError, getTask, taskResult } from "../support/conformance.js";
import { connectHttpClient, type HttpClient } from "../support/http-fixture.js";
import { handlerStarted } from "../support/handler-started.js";
import { SAME_REQUEST_MS } from "../../src/runtime/stop-signals.js";
import { HANDED_BACK_LOCAL_MESSAGE } from "../../src/runtime/drain.js";
import { HANDED_BACK_RERUN_MESSAGE, INTERRUPTED_MESSAGE } from "../../src/runtime/upkeep/recovery.js";

let dir: string;
const clients: HttpClient[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-drain-e2e-"));
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

const file = (): string => join(dir, "t.db");

async function startServer(extra: string[] = []): Promise<{ server: CliProcess; client: HttpClient; url: string }> {
  const server = CliProcess.spawn(["serve", "--demo", "--store", `sqlite:${file()}`, "--port", "0", ...extra]);
  // tsx compiles the CLI at start: slow on a loaded machine.
  const url = await server.url(60_000);
  const client = await connectHttpClient(url);
  clients.push(client);
  return { server, client, url };
}

/** The task's row as the file holds it, read after the server exited. */
function storedTask(id: string): { status: string; outcome: string | null } | undefined {
  const db = new Database(file(), { readonly: true });
  try {
    return db.prepare<[string], { status: string; outcome: string | null }>("SELECT status, outcome FROM tasks WHERE id = ?").get(id);
  } finally {
    db.close();
  }
}

function storedMessage(id: string): string | null | undefined {
  const db = new Database(file(), { readonly: true });
  try {
    return db.prepare<[string], { status_message: string | null }>("SELECT status_message FROM tasks WHERE id = ?").get(id)?.status_message;
  } finally {
    db.close();
  }
}

/** Sends SIGTERM and resolves once the server logged that it drains. */
async function sigterm(server: CliProcess): Promise<void> {
  server.child.kill("SIGTERM");
  await server.stderr.waitFor(
    (l) => typeof l["msg"] === "string" && l["msg"].startsWith("shutting down: draining"),
    "the server to start draining",
  );
}

describe("SIGTERM drains `serve` on SQLite", { timeout: 180_000 }, () => {
  it("a task that ends within the grace period completes, its waiting tasks/result is answered, and the process exits 0", async () => {
    const { server, client } = await startServer();
    const { task } = await callToolAsTask(client.client, "sleep", { ms: 1500 });
    const waiting = taskResult(client.client, task.taskId);
    await client.exchanges.waitFor((e) => e.body?.method === "tasks/result", "tasks/result to be under way");
    await sigterm(server);
    expect((await waiting).content).toEqual([{ type: "text", text: "slept 1500 ms" }]);
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(storedTask(task.taskId)?.status).toBe("completed");
  });

  it("a task still running when the grace period ends is left active in the file, not failed, and the next start runs it to completion", async () => {
    const { server, client } = await startServer(["--drain-timeout", "200"]);
    // batch is retryable: its recovery re-runs it from the start.
    const { task } = await callToolAsTask(client.client, "batch", { ms: 4000 });
    await sigterm(server);
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(storedTask(task.taskId)).toEqual({ status: "working", outcome: null });
    expect(server.stderr.items.map((l) => [l["audit"], l["taskId"]])).toContainEqual(["handed_back", task.taskId]);

    const next = await startServer();
    expect((await taskResult(next.client.client, task.taskId)).content).toEqual([{ type: "text", text: "slept 4000 ms" }]);
    expect((await getTask(next.client.client, task.taskId)).status).toBe("completed");
  });

  it('a task of a tool without recovery (sleep: "fail") handed back by the drain is marked so in the file and re-run to completion by the next start, as another worker would in a cluster', async () => {
    const { server, client } = await startServer(["--drain-timeout", "200"]);
    const { task } = await callToolAsTask(client.client, "sleep", { ms: 3000 });
    await sigterm(server);
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(storedTask(task.taskId)).toEqual({ status: "working", outcome: null });
    expect(storedMessage(task.taskId)).toBe(HANDED_BACK_LOCAL_MESSAGE);

    const next = await startServer();
    expect((await taskResult(next.client.client, task.taskId)).content).toEqual([{ type: "text", text: "slept 3000 ms" }]);
    const done = await getTask(next.client.client, task.taskId);
    expect(done.status).toBe("completed");
    expect(next.server.stderr.items.map((l) => [l["audit"], l["handedBack"], l["taskId"]])).toContainEqual(["rerun", true, task.taskId]);
  });

  it("the same task cut short by kill -9 instead (a crash, no drain) still follows its tool's recovery: failed at the next start, saying why", async () => {
    const { server, client } = await startServer();
    const { task } = await callToolAsTask(client.client, "sleep", { ms: 3000 });
    // Killed once its handler runs: a task still queued (acknowledged, never started) is simply started by the next start.
    await handlerStarted(file(), task.taskId);
    expect(await server.kill("SIGKILL")).toEqual({ code: null, signal: "SIGKILL" });
    expect(storedMessage(task.taskId)).not.toBe(HANDED_BACK_LOCAL_MESSAGE);

    const next = await startServer();
    const failed = await getTask(next.client.client, task.taskId);
    expect(failed.status).toBe("failed");
    expect(failed.statusMessage).toBe(INTERRUPTED_MESSAGE);
  });

  it("a task acknowledged but still queued when the server is killed -9 never ran: the next start runs it to completion", async () => {
    const { server, client } = await startServer(["--workers", "1"]);
    const { task: running } = await callToolAsTask(client.client, "sleep", { ms: 60_000 });
    await handlerStarted(file(), running.taskId);
    const { task: queued } = await callToolAsTask(client.client, "sleep", { ms: 500 });
    expect(await server.kill("SIGKILL")).toEqual({ code: null, signal: "SIGKILL" });

    const next = await startServer(["--workers", "1"]);
    expect((await taskResult(next.client.client, queued.taskId)).content).toEqual([{ type: "text", text: "slept 500 ms" }]);
    expect((await getTask(next.client.client, running.taskId)).statusMessage).toBe(INTERRUPTED_MESSAGE);
  });

  it("a re-run of a handed-back task loses the mark: killed -9 in turn, it fails at the start after", async () => {
    const { server, client } = await startServer(["--drain-timeout", "200"]);
    const { task } = await callToolAsTask(client.client, "sleep", { ms: 60_000 });
    await sigterm(server);
    expect(await server.exited).toEqual({ code: 0, signal: null });

    const second = await startServer();
    await second.server.stderr.waitFor((l) => l["audit"] === "rerun" && l["taskId"] === task.taskId, "the handed-back task to be re-run");
    expect((await getTask(second.client.client, task.taskId)).statusMessage).toBe(HANDED_BACK_RERUN_MESSAGE);
    await second.server.kill("SIGKILL");

    const third = await startServer();
    expect((await getTask(third.client.client, task.taskId)).status).toBe("failed");
  });

  it("while draining, a new task is refused with -32003 (data.reason 'draining'), /readyz answers 503 'draining' and /healthz 200; reads still work", async () => {
    const { server, client, url } = await startServer(["--drain-timeout", "60000"]);
    const { task } = await callToolAsTask(client.client, "sleep", { ms: 60_000 });
    await sigterm(server);
    const refused = await expectRpcError(callToolAsTask(client.client, "sleep", { ms: 10 }), -32003, /shutting down/);
    expect(refused.data).toMatchObject({ reason: "draining", retryAfterMs: expect.any(Number) });
    const readyz = await fetch(new URL("/readyz", url));
    expect(readyz.status).toBe(503);
    expect(await readyz.json()).toMatchObject({ status: "draining" });
    expect((await fetch(new URL("/healthz", url))).status).toBe(200);
    expect((await getTask(client.client, task.taskId)).status).toBe("working");
  });

  it("a second SIGTERM during the drain, more than a second after the first, exits at once (143), leaving the running task active (unmarked: the next start treats it as a crash)", async () => {
    const { server, client } = await startServer(["--drain-timeout", "60000"]);
    const { task } = await callToolAsTask(client.client, "sleep", { ms: 60_000 });
    await sigterm(server);
    // Sooner, it would be the same request (a process group's relayed signals): see drain-signals.test.ts.
    await new Promise((resolve) => setTimeout(resolve, SAME_REQUEST_MS + 200));
    server.child.kill("SIGTERM");
    expect(await server.exited).toEqual({ code: 143, signal: null });
    expect(storedTask(task.taskId)).toEqual({ status: "working", outcome: null });
    expect(storedMessage(task.taskId)).not.toBe(HANDED_BACK_LOCAL_MESSAGE);
  });
});

describe("the drain flag", { timeout: 150_000 }, () => {
  it("serve --help and worker --help document --drain-timeout with its default of 30 s", async () => {
    for (const command of ["serve", "worker"]) {
      const help = await runCli([command, "--help"], { timeoutMs: 60_000 });
      expect(help.code).toBe(0);
      expect(help.stdout.replace(/\s+/g, " ")).toMatch(/--drain-timeout <ms> .*?\(default: 30000\)/);
    }
  });
});
