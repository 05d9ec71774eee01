/**
 * One writer per SQLite file: a second server on a file another one runs
 * tasks from refuses to start — exit code 7 and a message naming the file from the CLI, a
 * StoreInUseError from the library — and touches none of the first one's tasks. The lock dies
 * with its process: after kill -9 the next server starts. Readers of the file are not locked out.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { localEventBus } from "../../src/events/local-event-bus.js";
import { TaskEngine } from "../../src/runtime/task-engine.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { StoreInUseError } from "../../src/store/writer-lock.js";
import { CliProcess, killAll, runCli } from "../support/cli-process.js";
import { callToolAsTask, getTask } from "../support/conformance.js";
import { connectHttpClient, type HttpClient } from "../support/http-fixture.js";

const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-writer-"));
let files = 0;
const freshFile = (): string => join(dir, `t-${++files}.db`);
const clients: HttpClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await killAll();
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Starting a CLI compiles it through tsx: slow on a loaded machine. */
const START_MS = 60_000;
const refusedServe = (file: string) => runCli(serveArgs(file), { timeoutMs: START_MS });
const serveArgs = (file: string): string[] => ["serve", "--demo", "--store", `sqlite:${file}`, "--port", "0"];

async function startServer(file: string): Promise<{ server: CliProcess; client: HttpClient }> {
  const server = CliProcess.spawn(serveArgs(file));
  const client = await connectHttpClient(await server.url(START_MS));
  clients.push(client);
  return { server, client };
}

const engineOn = (store: ReturnType<typeof sqliteStore>): TaskEngine =>
  new TaskEngine({ store, bus: localEventBus(), runner: async () => ({ value: { content: [] } }) });

describe("one server per SQLite file, across real processes", { timeout: 180_000 }, () => {
  it("a second `serve` on the same file exits 7 with a message naming the file and the first server's pid", async () => {
    const file = freshFile();
    const first = await startServer(file);
    const second = await refusedServe(file);
    expect(second.code).toBe(7);
    expect(second.stderr).toContain(`The task store ${resolve(file)} is in use by another mcp-tasks server (pid ${first.server.pid} `);
  });

  it("the refused server leaves the first one's running task alone (its recovery never ran): still working", async () => {
    const file = freshFile();
    const first = await startServer(file);
    const { task } = await callToolAsTask(first.client.client, "sleep", { ms: 600_000 });
    expect((await refusedServe(file)).code).toBe(7);
    expect((await getTask(first.client.client, task.taskId)).status).toBe("working");
  });

  it("after kill -9 of the holder, the next server on the file starts (the lock died with it)", async () => {
    const file = freshFile();
    const first = await startServer(file);
    expect(await first.server.kill("SIGKILL")).toEqual({ code: null, signal: "SIGKILL" });
    const next = await startServer(file);
    expect(next.server.child.exitCode).toBeNull();
  });

  it("a reader of the file (a read-only SQLite connection) is not locked out while a server holds it", async () => {
    const file = freshFile();
    const first = await startServer(file);
    const { task } = await callToolAsTask(first.client.client, "sleep", { ms: 10 });
    const raw = new Database(file, { readonly: true });
    try {
      expect(raw.prepare("SELECT id FROM tasks").all()).toEqual([{ id: task.taskId }]);
    } finally {
      raw.close();
    }
  });
});

describe("one engine per SQLite file, in the library", () => {
  it("a second engine's start() throws StoreInUseError naming the file; once the first store closes, it starts", async () => {
    const file = freshFile();
    const firstStore = sqliteStore(file);
    const first = engineOn(firstStore);
    await first.start();
    const secondStore = sqliteStore(file);
    const second = engineOn(secondStore);
    try {
      const refused = await second.start().then(
        () => null,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(StoreInUseError);
      expect(refused).toMatchObject({ file: resolve(file), holder: { pid: process.pid } });
      await first.close();
      await firstStore.close();
      await expect(second.start()).resolves.toBeUndefined();
    } finally {
      await second.close();
      await secondStore.close();
    }
  });

  it("stores that only read or write the file, without an engine, share it freely", async () => {
    const file = freshFile();
    const serverStore = sqliteStore(file);
    const engine = engineOn(serverStore);
    await engine.start();
    const other = sqliteStore(file);
    try {
      expect(await other.countActive(null)).toBe(0);
    } finally {
      await other.close();
      await engine.close();
      await serverStore.close();
    }
  });
});
