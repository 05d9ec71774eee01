/**
 * `serve --remember-expired <ms>` (docs/limits.md#retention) with real CLI processes, in both
 * eras from one table: once the sweeper has deleted a task past its retention, its id answers
 * "Task has expired" for as long as the flag says (24 hours by default), then "Task not found"
 * like an id never seen; 0 forgets at once.
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
let forgetting: string;
let remembering: string;

async function serve(extra: string[]): Promise<string> {
  const port = await freePort();
  const server = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", String(port), "--default-ttl", String(TTL_MS), "--poll-interval", "50", ...extra]);
  return server.url();
}

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), "mcp-tasks-remember-"));
  other = mkdtempSync(join(tmpdir(), "mcp-tasks-remember-other-"));
  forgetting = await serve(["--remember-expired", "0"]);
  remembering = await serve([]);
}, 60_000);

afterAll(async () => {
  await killAll();
  rmSync(state, { recursive: true, force: true });
  rmSync(other, { recursive: true, force: true });
});

const cli = (args: string[], stateDir = state) => runCli(args, { env: { MCP_TASKS_STATE_DIR: stateDir }, timeoutMs: 30_000 });

/** Runs a task to its end through the CLI and returns its id once the sweeper has deleted it. */
async function sweptTask(url: string, protocol: string): Promise<string> {
  // Longer than the 2026-07-28 inline wait (250 ms), so the call answers with its task in both eras.
  const created = await cli(["call", url, "sleep", '{"ms":400}', "--task", "--ttl", String(TTL_MS), "--detach", "--protocol", protocol]);
  expect(created.code).toBe(0);
  const id = created.stdout.trim();
  await new Promise((resolve) => setTimeout(resolve, SWEPT_AFTER_MS));
  return id;
}

describe.each(["2025-11-25", "2026-07-28"])("serve --remember-expired (%s)", { timeout: 60_000 }, (protocol) => {
  it("T-ERR-7: by default a swept task's id still answers that the task expired", async () => {
    const id = await sweptTask(remembering, protocol);
    const run = await cli(["tasks", "get", remembering, id, "--protocol", protocol], other);
    expect(run.stderr).toMatch(/expired/i);
    expect(run.code).toBe(1);
  });

  it("with --remember-expired 0 a swept task's id answers like an id never seen", async () => {
    const id = await sweptTask(forgetting, protocol);
    const run = await cli(["tasks", "get", forgetting, id, "--protocol", protocol], other);
    expect(run.stderr).toMatch(/not found/i);
    expect(run.stderr).not.toMatch(/expired/i);
    expect(run.code).toBe(1);
  });
});
