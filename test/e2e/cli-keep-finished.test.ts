/**
 * `serve --keep-finished <ms>` (docs/limits.md#retention) with real CLI processes, in both eras
 * from one table: a finished task whose ttl has run out is still fetchable while the keep lasts;
 * without the flag the same lookup says the task expired.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, killAll, runCli } from "../support/cli-process.js";
import { freePort } from "../support/free-port.js";

const TTL_MS = 1_000;
let state: string;
let kept: string;
let plain: string;

async function serve(extra: string[]): Promise<string> {
  const port = await freePort();
  const server = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", String(port), "--default-ttl", String(TTL_MS), "--poll-interval", "50", ...extra]);
  return server.url();
}

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), "mcp-tasks-keep-"));
  kept = await serve(["--keep-finished", "60000"]);
  plain = await serve([]);
}, 60_000);

afterAll(async () => {
  await killAll();
  rmSync(state, { recursive: true, force: true });
});

const cli = (args: string[]) => runCli(args, { env: { MCP_TASKS_STATE_DIR: state }, timeoutMs: 30_000 });

/** Runs a task to its end through the CLI and returns its id, once its ttl has run out. */
async function finishedPastTtl(url: string, protocol: string): Promise<string> {
  // Longer than the 2026-07-28 inline wait (250 ms), so the call answers with its task in both eras.
  const created = await cli(["call", url, "sleep", '{"ms":400}', "--task", "--ttl", String(TTL_MS), "--detach", "--protocol", protocol]);
  expect(created.code).toBe(0);
  const id = created.stdout.trim();
  await new Promise((resolve) => setTimeout(resolve, TTL_MS + 300));
  return id;
}

describe.each(["2025-11-25", "2026-07-28"])("serve --keep-finished (%s)", { timeout: 60_000 }, (protocol) => {
  it("a finished task past its ttl is still fetchable while --keep-finished lasts", async () => {
    const id = await finishedPastTtl(kept, protocol);
    const run = await cli(["tasks", "get", kept, id, "--json", "--protocol", protocol]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "null")).toMatchObject({ status: "completed" });
  });

  it("T-ERR-7: without --keep-finished the same task has expired", async () => {
    const id = await finishedPastTtl(plain, protocol);
    const run = await cli(["tasks", "get", plain, id, "--protocol", protocol]);
    expect(run.stderr).toMatch(/expired/);
    expect(run.code).toBe(1);
  });
});
