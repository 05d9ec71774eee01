/**
 * `serve`'s retention flags (docs/limits.md#retention) with real CLI processes, in both eras from
 * one table: `--keep-finished <ms>` keeps a finished task fetchable past its ttl; without it the
 * same lookup says the task expired. `--remember-expired <ms>`: once the sweeper has deleted a
 * task, its id answers "Task has expired" for that long (24 hours by default), then "Task not
 * found" like an id never seen; 0 forgets at once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, killAll, runCli } from "../support/cli-process.js";
import { freePort } from "../support/free-port.js";

const TTL_MS = 1_000;
/** Past the ttl and one sweep (the sweeper runs every second) with room to spare. */
const SWEPT_AFTER_MS = TTL_MS + 2_500;
let state: string;
/** The state of a second requestor, which did not create the tasks: the CLI infers nothing from a journal of its own. */
let other: string;
let kept: string;
let plain: string;
let forgetting: string;

async function serve(extra: string[]): Promise<string> {
  const port = await freePort();
  const server = CliProcess.spawn([
    "serve",
    "--demo",
    "--store",
    "memory",
    "--port",
    String(port),
    "--default-ttl",
    String(TTL_MS),
    "--poll-interval",
    "50",
    ...extra,
  ]);
  return server.url();
}

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), "mcp-tasks-retention-"));
  other = mkdtempSync(join(tmpdir(), "mcp-tasks-retention-other-"));
  [kept, plain, forgetting] = await Promise.all([serve(["--keep-finished", "60000"]), serve([]), serve(["--remember-expired", "0"])]);
}, 60_000);

afterAll(async () => {
  await killAll();
  rmSync(state, { recursive: true, force: true });
  rmSync(other, { recursive: true, force: true });
});

const cli = (args: string[], stateDir = state) => runCli(args, { env: { MCP_TASKS_STATE_DIR: stateDir }, timeoutMs: 30_000 });

/** Runs a task to its end through the CLI and returns its id once `waitMs` have passed since. */
async function finishedTask(url: string, protocol: string, waitMs: number): Promise<string> {
  // Longer than the 2026-07-28 inline wait (250 ms), so the call answers with its task in both eras.
  const created = await cli(["call", url, "sleep", '{"ms":400}', "--task", "--ttl", String(TTL_MS), "--detach", "--protocol", protocol]);
  expect(created.code).toBe(0);
  const id = created.stdout.trim();
  await new Promise((resolve) => setTimeout(resolve, waitMs));
  return id;
}

describe.each(["2025-11-25", "2026-07-28"])("serve --keep-finished (%s)", { timeout: 60_000 }, (protocol) => {
  it("a finished task past its ttl is still fetchable while --keep-finished lasts", async () => {
    const id = await finishedTask(kept, protocol, TTL_MS + 300);
    const run = await cli(["tasks", "get", kept, id, "--json", "--protocol", protocol]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "null")).toMatchObject({ status: "completed" });
  });

  it("T-ERR-7: without --keep-finished the same task has expired", async () => {
    const id = await finishedTask(plain, protocol, TTL_MS + 300);
    const run = await cli(["tasks", "get", plain, id, "--protocol", protocol]);
    expect(run.stderr).toMatch(/expired/);
    expect(run.code).toBe(1);
  });
});

describe.each(["2025-11-25", "2026-07-28"])("serve --remember-expired (%s)", { timeout: 60_000 }, (protocol) => {
  it("T-ERR-7: by default a swept task's id still answers that the task expired", async () => {
    const id = await finishedTask(plain, protocol, SWEPT_AFTER_MS);
    const run = await cli(["tasks", "get", plain, id, "--protocol", protocol], other);
    expect(run.stderr).toMatch(/expired/i);
    expect(run.code).toBe(1);
  });

  it("with --remember-expired 0 a swept task's id answers like an id never seen", async () => {
    const id = await finishedTask(forgetting, protocol, SWEPT_AFTER_MS);
    const run = await cli(["tasks", "get", forgetting, id, "--protocol", protocol], other);
    expect(run.stderr).toMatch(/not found/i);
    expect(run.stderr).not.toMatch(/expired/i);
    expect(run.code).toBe(1);
  });
});
