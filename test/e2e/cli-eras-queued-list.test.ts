/**
 * `mcp-tasks tasks list` shows a queued task's "queued (n ahead)" as `tasks get` does, in both
 * protocol eras from one table (2025-11-25 lists with tasks/list, 2026-07-28 reads the journal's
 * tasks with tasks/get): real CLI processes against a real `serve --demo --workers 1`, where a
 * second task waits for the first one's handler slot.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERAS } from "../support/cli-eras.js";
import { CliProcess, killAll, runCli } from "../support/cli-process.js";
import { WHOLE_TASK_ID } from "../support/task-id-pattern.js";

let dir: string;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-cli-queued-"));
  const server = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0", "--workers", "1"]);
  url = await server.url();
}, 30_000);

afterAll(async () => {
  // SIGKILL: the tasks left running need no drain.
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(ERAS)("mcp-tasks tasks list under $name", { timeout: 40_000 }, (era) => {
  it("shows a queued task's status message, queued (n ahead), as tasks get does", async () => {
    const env = { MCP_TASKS_STATE_DIR: mkdtempSync(join(dir, "state-")), MCP_TASKS_PROTOCOL: era.protocol };
    const detach = async (): Promise<string> => {
      const run = await runCli(["call", url, "batch", '{"ms":30000}', "--detach"], { env });
      expect(run.code, run.stderr).toBe(0);
      const id = run.stdout.trim();
      expect(id).toMatch(WHOLE_TASK_ID);
      return id;
    };
    await detach();
    const queued = await detach();
    const got = await runCli(["tasks", "get", url, queued], { env });
    const message = /^statusMessage: (queued \(\d+ ahead\))$/m.exec(got.stdout)?.[1];
    expect(message, got.stdout).toBeDefined();
    const listed = await runCli(["tasks", "list", url], { env });
    expect(listed.code, listed.stderr).toBe(0);
    const row = listed.stdout.split("\n").find((line) => line.startsWith(queued));
    expect(row, listed.stdout).toMatch(/\bworking\b.*\bqueued \(\d+ ahead\)$/);
  });
});
