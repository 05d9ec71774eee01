/**
 * The drain of `serve` under the signals users really send, in real processes: a SIGTERM to a
 * server whose garbage collector runs all the time (Node 20 collects a timeout signal held only by
 * AbortSignal.any(), and the grace period then never ended), and the Ctrl-C of a terminal — SIGINT
 * to the whole process group of `npm start`, which reaches the server more than once within
 * milliseconds (npm and tsx relay it) and must still be one drain.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CliProcess, cliEnv, killAll, REPO_ROOT } from "../support/cli-process.js";
import { callToolAsTask } from "../support/conformance.js";
import { connectHttpClient, type HttpClient } from "../support/http-fixture.js";
import { DEFAULT_DRAIN_GRACE_MS, HANDED_BACK_LOCAL_MESSAGE } from "../../src/runtime/drain.js";

const FORCE_GC = fileURLToPath(new URL("../support/force-gc.mjs", import.meta.url));

let dir: string;
const clients: HttpClient[] = [];
const groups: number[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-drain-signals-"));
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
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

const file = (): string => join(dir, "t.db");

function stored(id: string): { status: string; status_message: string | null } | undefined {
  const db = new Database(file(), { readonly: true });
  try {
    return db
      .prepare<[string], { status: string; status_message: string | null }>("SELECT status, status_message FROM tasks WHERE id = ?")
      .get(id);
  } finally {
    db.close();
  }
}

async function connect(server: CliProcess): Promise<HttpClient> {
  // tsx compiles the CLI at start: slow on a loaded machine.
  const client = await connectHttpClient(await server.url(60_000));
  clients.push(client);
  return client;
}

const drainBegan = (l: Record<string, unknown>): boolean => typeof l["msg"] === "string" && l["msg"].startsWith("shutting down: draining");
const stoppedAtOnce = (l: Record<string, unknown>): boolean => typeof l["msg"] === "string" && l["msg"].startsWith("second signal");

describe("the drain of a real `serve`", { timeout: 240_000 }, () => {
  it("with the garbage collector running throughout, a SIGTERM with the default grace period ends at its deadline: the running task is handed back and the next start re-runs it", async () => {
    const server = CliProcess.spawn(["serve", "--demo", "--store", `sqlite:${file()}`, "--port", "0"], {
      nodeArgs: ["--expose-gc", "--import", FORCE_GC],
    });
    const client = await connect(server);
    const { task } = await callToolAsTask(client.client, "sleep", { ms: 120_000 });
    const sent = Date.now();
    server.child.kill("SIGTERM");
    await server.stderr.waitFor(drainBegan, "the server to start draining");
    await server.stderr.waitFor((l) => l["msg"] === "drained", "the drain to end", DEFAULT_DRAIN_GRACE_MS + 30_000);
    const took = Date.now() - sent;
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(took).toBeGreaterThanOrEqual(DEFAULT_DRAIN_GRACE_MS - 1_000);
    expect(took).toBeLessThan(DEFAULT_DRAIN_GRACE_MS + 15_000);
    expect(stored(task.taskId)).toEqual({ status: "working", status_message: HANDED_BACK_LOCAL_MESSAGE });

    const next = CliProcess.spawn(["serve", "--demo", "--store", `sqlite:${file()}`, "--port", "0"]);
    await connect(next);
    await next.stderr.waitFor(
      (l) => l["audit"] === "rerun" && l["handedBack"] === true && l["taskId"] === task.taskId,
      "the handed-back task to be re-run",
      60_000,
    );
  });

  it("a Ctrl-C to the process group of `npm start` (SIGINT to npm, sh, tsx and node, relayed again by npm and tsx) is one drain, not the immediate stop", async () => {
    const npm = spawn("npm", ["start", "--", "--store", `sqlite:${file()}`, "--port", "0", "--drain-timeout", "2000"], {
      cwd: REPO_ROOT,
      env: cliEnv(),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    if (npm.pid === undefined) throw new Error("npm did not start");
    groups.push(npm.pid);
    const server = CliProcess.of(npm);
    const client = await connect(server);
    const { task } = await callToolAsTask(client.client, "sleep", { ms: 120_000 });
    process.kill(-npm.pid, "SIGINT");
    await server.stderr.waitFor(drainBegan, "the server to start draining");
    const drained = await server.stderr.waitFor((l) => l["msg"] === "drained", "the drain to end", 30_000);
    await server.exited;
    expect(server.stderr.filter(stoppedAtOnce)).toEqual([]);
    expect(drained).toMatchObject({ handedBack: 1 });
    expect(stored(task.taskId)).toEqual({ status: "working", status_message: HANDED_BACK_LOCAL_MESSAGE });
  });
});
