/**
 * `mcp-tasks tools pause | resume URL TOOL` and the paused column of `tools list`, with real CLI
 * processes against a real `serve --demo` on a SQLite file: the rules of the admin route (the
 * admin token, an unknown tool named), a paused tool's call accepted and queued with a status
 * message that says why, in both protocol eras from one table, and a pause that survives a
 * restart of the server (read back from the file by `tools list` and `/metrics`).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERAS } from "../support/cli-eras.js";
import { CliProcess, killAll, runCli } from "../support/cli-process.js";
import { WHOLE_TASK_ID } from "../support/task-id-pattern.js";

const ADMIN = "admin-token-for-pause-tests";
let dir: string;
let db: string;
let server: CliProcess;
let url: string;

function serve(): CliProcess {
  return CliProcess.spawn(["serve", "--demo", "--store", `sqlite:${db}`, "--port", "0", "--admin-token", ADMIN]);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-cli-pause-"));
  db = join(dir, "tasks.db");
  server = serve();
  url = await server.url();
}, 30_000);

afterAll(async () => {
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

const admin = { MCP_TASKS_ADMIN_TOKEN: ADMIN };

/** The `tools list` row of `tool`. */
async function listedRow(tool: string, env: Record<string, string> = {}): Promise<string | undefined> {
  const listed = await runCli(["tools", "list", url], { env });
  expect(listed.code, listed.stderr).toBe(0);
  return listed.stdout.split("\n").find((line) => line.startsWith(`${tool} `));
}

describe("mcp-tasks tools pause | resume (the admin route's rules)", { timeout: 40_000 }, () => {
  it("refuses a call without the admin token (exit 6), names an unknown tool (exit 2), and needs both arguments", async () => {
    const wrong = await runCli(["tools", "pause", url, "sleep", "--admin-token", "not-the-token"]);
    expect(wrong.code).toBe(6);
    expect(wrong.stderr).toContain("Unauthorized");
    const unknown = await runCli(["tools", "pause", url, "no-such-tool"], { env: admin });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown tool: "no-such-tool"');
    const missing = await runCli(["tools", "pause", url], { env: admin });
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/missing required argument 'tool'/);
    expect(await listedRow("sleep")).not.toMatch(/\bpaused\b/);
  });

  it("pausing twice says it was paused already; resuming twice says it was not paused", async () => {
    expect((await runCli(["tools", "pause", url, "echo"], { env: admin })).stdout).toBe("echo paused\n");
    expect((await runCli(["tools", "pause", url, "echo"], { env: admin })).stdout).toBe("echo was paused already\n");
    expect(await listedRow("echo")).toMatch(/^echo\s+forbidden\s+paused\s/);
    expect((await runCli(["tools", "resume", url, "echo"], { env: admin })).stdout).toBe("echo resumed\n");
    expect((await runCli(["tools", "resume", url, "echo"], { env: admin })).stdout).toBe("echo was not paused\n");
    expect(await listedRow("echo")).not.toMatch(/\bpaused\b/);
  });
});

describe.each(ERAS)("a paused tool under $name", { timeout: 60_000 }, (era) => {
  it("accepts a call as a queued task whose status message says the tool is paused; it runs once resumed", async () => {
    const env = { MCP_TASKS_STATE_DIR: mkdtempSync(join(dir, "state-")), MCP_TASKS_PROTOCOL: era.protocol };
    const paused = await runCli(["tools", "pause", url, "batch"], { env: { ...env, ...admin } });
    expect(paused.code, paused.stderr).toBe(0);
    expect(await listedRow("batch", env)).toMatch(/\bpaused\b/);
    const json = await runCli(["tools", "list", url, "--json"], { env });
    const tools = (JSON.parse(json.stdout) as { tools: Array<{ name: string; paused: boolean }> }).tools;
    expect(tools.find((tool) => tool.name === "batch")?.paused).toBe(true);
    expect(tools.find((tool) => tool.name === "sleep")?.paused).toBe(false);

    const call = await runCli(["call", url, "batch", '{"ms":10}', "--detach"], { env });
    expect(call.code, call.stderr).toBe(0);
    const id = call.stdout.trim();
    expect(id).toMatch(WHOLE_TASK_ID);
    // Still queued a while later: nothing of a paused tool starts.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const got = await runCli(["tasks", "get", url, id], { env });
    expect(got.stdout).toMatch(/^status:\s+working$/m);
    expect(got.stdout).toMatch(/^statusMessage:\s+queued: the tool batch is paused; it starts once an operator resumes the tool$/m);

    const resumed = await runCli(["tools", "resume", url, "batch"], { env: { ...env, ...admin } });
    expect(resumed.code, resumed.stderr).toBe(0);
    const result = await runCli(["tasks", "result", url, id], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("slept 10 ms");
  });
});

describe("a pause survives a restart of the server", { timeout: 60_000 }, () => {
  it("is read back from the store: tools list and /metrics show it after the restart, and resume lifts it", async () => {
    expect((await runCli(["tools", "pause", url, "sleep"], { env: admin })).code).toBe(0);
    await server.kill("SIGKILL");
    server = serve();
    url = await server.url();
    expect(await listedRow("sleep")).toMatch(/^sleep\s+optional\s+paused\s/);
    const metrics = await (await fetch(new URL("/metrics", url))).text();
    expect(metrics).toMatch(/^mcp_tasks_tool_paused\{tool="sleep"\} 1$/m);
    expect(metrics).toMatch(/^mcp_tasks_tool_paused\{tool="echo"\} 0$/m);
    expect((await runCli(["tools", "resume", url, "sleep"], { env: admin })).code).toBe(0);
    expect(await listedRow("sleep")).not.toMatch(/\bpaused\b/);
    const after = await (await fetch(new URL("/metrics", url))).text();
    expect(after).toMatch(/^mcp_tasks_tool_paused\{tool="sleep"\} 0$/m);
  });
});
