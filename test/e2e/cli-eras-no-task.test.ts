/**
 * What `mcp-tasks call` and `tasks …` say when there is no task to speak of, in both protocol eras
 * from one table (real CLI processes against a real `serve --demo`): a `--task` call the server
 * answered at once says on stderr that no task was created, and a `--json` error keeps the
 * documented shape — `taskId` and `status` present, null when not known — for a refused creation,
 * an unreachable server and a task the server does not know.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERAS } from "../support/cli-eras.js";
import { CliProcess, killAll, runCli } from "../support/cli-process.js";
import { freePort } from "../support/free-port.js";

let dir: string;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-cli-no-task-"));
  const server = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0", "--poll-interval", "100"]);
  url = await server.url();
}, 30_000);

afterAll(async () => {
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

const lastJson = (stdout: string): Record<string, unknown> =>
  JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;

describe.each(ERAS)("mcp-tasks without a task under $name", { timeout: 40_000 }, (era) => {
  const cli = (args: string[]) =>
    runCli(args, { env: { MCP_TASKS_STATE_DIR: mkdtempSync(join(dir, "state-")), MCP_TASKS_PROTOCOL: era.protocol }, timeoutMs: 30_000 });

  it("call --task says on stderr when the server answered at once without a task, and prints the result", async () => {
    const run = await cli(["call", url, "sleep", '{"ms":10}', "--task"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("slept 10 ms");
    if (era.quickTaskCall === "inline")
      expect(run.stderr).toContain("No task was created: the server answered the call at once; its result follows.");
    else expect(run.stderr).not.toContain("No task was created");
  });

  it("call --json of a creation the server refuses prints {taskId: null, status: null, error}", async () => {
    const run = await cli(["call", url, "sleep", '{"ms":"soon"}', "--task", "--json"]);
    expect(run.code).toBe(1);
    expect(lastJson(run.stdout)).toEqual({
      taskId: null,
      status: null,
      error: { code: -32602, message: expect.stringContaining("Invalid arguments for tool sleep") },
    });
  });

  it("call --json against an unreachable server prints {taskId: null, status: null, error} and exits 4", async () => {
    const run = await cli(["call", `http://127.0.0.1:${await freePort()}/mcp`, "sleep", '{"ms":10}', "--task", "--json"]);
    expect(run.code).toBe(4);
    expect(lastJson(run.stdout)).toEqual({
      taskId: null,
      status: null,
      error: expect.objectContaining({ message: expect.stringContaining("connection refused") }),
    });
  });

  it("tasks get --json of a task the server does not know prints {taskId, status: null, error}", async () => {
    const id = "0mx93b3gx122b79979fd2c9a4a1c9777f88ded219";
    const run = await cli(["tasks", "get", url, id, "--json"]);
    expect(run.code).toBe(1);
    expect(lastJson(run.stdout)).toEqual({ taskId: id, status: null, error: expect.objectContaining({ code: -32602 }) });
  });
});
