/**
 * A server embedded as the README's five-minute start does it (`server.ts` run with `npx tsx`,
 * `serveHttp` or `app.connect` over stdio) stops as `mcp-tasks serve` does on a stop signal: it
 * drains, hands back or finishes its running task, and exits 0 — the task is never failed by the
 * next start. The scripts live in a project of their own (a temp dir, `"type": "module"`) and
 * import the package's sources.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CliProcess, killAll, REPO_ROOT } from "../support/cli-process.js";
import { callToolAsTask, getTask } from "../support/conformance.js";
import { connectHttpClient, type HttpClient } from "../support/http-fixture.js";
import { HANDED_BACK_LOCAL_MESSAGE } from "../../src/runtime/drain.js";

const TSX = join(REPO_ROOT, "node_modules/tsx/dist/cli.mjs");
const src = (entry: string): string => JSON.stringify(join(REPO_ROOT, "src/exports", entry));

/** The README's server, its tool reduced to a wait of `ms` that stops on its signal. */
const app = `
import { z } from "zod";
import { createTaskServer } from ${src("server.js")};
import { sqliteStore } from ${src("sqlite.js")};

export const app = createTaskServer({ name: "render-farm", version: "1.0.0", store: sqliteStore("tasks.db") });

app.tool("render", { input: z.object({ ms: z.number() }), taskSupport: "optional" }, async ({ ms }, ctx) => {
  console.error(JSON.stringify({ started: "render" }));
  await new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    ctx.signal.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(ctx.signal.reason);
    });
  });
  return { content: [{ type: "text", text: "rendered" }] };
});
`;

const httpServer = `
import { serveHttp } from ${src("http.js")};
import { app } from "./app.ts";

const http = await serveHttp(app, { port: 0, drainTimeoutMs: 200 });
console.error(JSON.stringify({ url: http.url }));
`;

const stdioServer = `
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { app } from "./app.ts";

await app.connect(new StdioServerTransport());
`;

let dir: string;
const groups: number[] = [];
const closers: (() => Promise<void>)[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-embedded-"));
  mkdirSync(dir, { recursive: true });
  symlinkSync(join(REPO_ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
  writeFileSync(join(dir, "app.ts"), app);
  writeFileSync(join(dir, "http-server.ts"), httpServer);
  writeFileSync(join(dir, "stdio-server.ts"), stdioServer);
});
afterEach(async () => {
  for (const close of closers.splice(0)) await close().catch(() => {});
  for (const pgid of groups.splice(0)) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // the group has exited
    }
  }
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

function stored(id: string): { status: string; status_message: string | null } | undefined {
  const db = new Database(join(dir, "tasks.db"), { readonly: true });
  try {
    return db
      .prepare<[string], { status: string; status_message: string | null }>("SELECT status, status_message FROM tasks WHERE id = ?")
      .get(id);
  } finally {
    db.close();
  }
}

function parsed(line: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** `npx tsx http-server.ts` in a terminal: its own process group, which a Ctrl-C signals as a whole. */
async function startHttp(): Promise<{ server: CliProcess; client: HttpClient }> {
  const child = spawn(process.execPath, [TSX, "http-server.ts"], { cwd: dir, stdio: ["ignore", "pipe", "pipe"], detached: true });
  if (child.pid === undefined) throw new Error("tsx did not start");
  groups.push(child.pid);
  const server = CliProcess.of(child);
  const client = await connectHttpClient(await server.url(60_000));
  closers.push(() => client.close());
  return { server, client };
}

describe("an embedded server on a stop signal", { timeout: 120_000 }, () => {
  it("serveHttp: a Ctrl-C drains, hands the running task back and exits 0; the next start runs the task to completion", async () => {
    const first = await startHttp();
    const { task } = await callToolAsTask(first.client.client, "render", { ms: 3_000 });
    await first.server.stderr.waitFor((l) => l["started"] === "render", "the handler to start");
    process.kill(-first.server.pid, "SIGINT");
    expect(await first.server.exited).toEqual({ code: 0, signal: null });
    expect(stored(task.taskId)).toEqual({ status: "working", status_message: HANDED_BACK_LOCAL_MESSAGE });

    const next = await startHttp();
    await expect
      .poll(async () => (await getTask(next.client.client, task.taskId)).status, { timeout: 30_000, interval: 250 })
      .toBe("completed");
  });

  it("app.connect over stdio: a SIGTERM lets the running task finish, then the process exits 0", async () => {
    const server = CliProcess.of(spawn(process.execPath, [TSX, "stdio-server.ts"], { cwd: dir, stdio: ["pipe", "pipe", "pipe"] }));
    const answer = async (id: number): Promise<Record<string, unknown>> => {
      const line = await server.stdoutLines.waitFor((l) => parsed(l)["id"] === id, `the answer to request ${id}`, 60_000);
      return parsed(line);
    };
    server.send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "embedded-stdio", version: "0.0.0" } },
    });
    await answer(1);
    server.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    server.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "render", arguments: { ms: 1_500 }, task: {} } });
    const { result } = (await answer(2)) as { result: { task: { taskId: string } } };
    await server.stderr.waitFor((l) => l["started"] === "render", "the handler to start");
    server.child.kill("SIGTERM");
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(stored(result.task.taskId)?.status).toBe("completed");
  });
});
