/**
 * `mcp-tasks tasks get --history` in both protocol eras from one table (real CLI processes against
 * a real `serve --demo`): the task's timeline, read from the server's HTTP timeline route with the
 * target's token, as lines and under --json; a server without that route (`--no-web`) and a
 * missing token are named as such. The servers answer no call inline (`--inline-wait-ms 0`), so a
 * call with --task makes a task in both eras.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERAS } from "../support/cli-eras.js";
import { CliProcess, killAll, runCli } from "../support/cli-process.js";

const ADMIN = "admin-token-for-the-history-cli-test";
let dir: string;
let url: string;
let noWebUrl: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-cli-history-"));
  const server = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0", "--admin-token", ADMIN, "--inline-wait-ms", "0"]);
  const bare = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0", "--no-web", "--inline-wait-ms", "0"]);
  [url, noWebUrl] = await Promise.all([server.url(), bare.url()]);
}, 30_000);

afterAll(async () => {
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

const lastJson = (stdout: string): Record<string, unknown> =>
  JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;

describe.each(ERAS)("mcp-tasks tasks get --history under $name", { timeout: 60_000 }, (era) => {
  const cli = (args: string[]) =>
    runCli(args, { env: { MCP_TASKS_STATE_DIR: mkdtempSync(join(dir, "state-")), MCP_TASKS_PROTOCOL: era.protocol }, timeoutMs: 30_000 });

  async function finishedTask(target: string): Promise<string> {
    const run = await cli(["call", target, "steps", '{"count":2,"ms":5}', "--task", "--json", "--token", ADMIN]);
    expect(run.code, run.stderr).toBe(0);
    const { taskId } = lastJson(run.stdout) as { taskId?: string };
    if (typeof taskId !== "string") throw new Error(`no task: ${run.stdout}`);
    return taskId;
  }

  it("prints the task and its timeline: status changes, the run, each step", async () => {
    const id = await finishedTask(url);
    const run = await cli(["tasks", "get", url, id, "--history", "--token", ADMIN]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`taskId:        ${id}`);
    const lines = run.stdout.split("\n").slice(2).filter(Boolean);
    expect(lines.map((line) => line.replace(/^\S+ {2}/, "").replace(/\d+ ms/g, "N ms"))).toEqual([
      "status    working",
      "run       1 (created), finished after N ms",
      "step      step 1#1: N ms, run 1, 1 bytes",
      "step      step 2#1: N ms, run 1, 1 bytes",
      "status    completed",
    ]);
  });

  it("--json prints the task with its timeline as history", async () => {
    const id = await finishedTask(url);
    const run = await cli(["tasks", "get", url, id, "--history", "--json", "--token", ADMIN]);
    expect(run.code, run.stderr).toBe(0);
    const body = lastJson(run.stdout) as { taskId: string; status: string; history: { runs: Array<{ ended: string }>; steps: unknown[] } };
    expect(body).toMatchObject({ taskId: id, status: "completed" });
    expect(body.history.runs.map((r) => r.ended)).toEqual(["finished"]);
    expect(body.history.steps).toHaveLength(2);
  });

  it("a server without the timeline route is named as such (exit 1), and a missing token asks for one (exit 6)", async () => {
    const id = await finishedTask(noWebUrl);
    const bare = await cli(["tasks", "get", noWebUrl, id, "--history", "--token", ADMIN]);
    expect(bare.code).toBe(1);
    expect(bare.stderr).toContain("this server serves no task timelines (GET /tasks/api/tasks/");
    expect(bare.stderr).toContain("--history needs an mcp-tasks server with its web view on");
    const tokenless = await cli(["tasks", "get", url, await finishedTask(url), "--history"]);
    expect(tokenless.code).toBe(6);
    expect(tokenless.stderr).toContain("pass --token (your MCP token, or the server's admin token)");
  });
});
