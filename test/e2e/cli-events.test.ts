/**
 * `mcp-tasks events emit URL NAME [JSON]` against a real `serve --demo` process with bearer tokens
 * and an admin token: a `call` of the demo tool `approve` waits, `tasks get` shows what it waits
 * for, and the emit wakes it; refusals end with the documented exit codes (docs/cli.md).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, killAll, runCli } from "../support/cli-process.js";

const ALICE = "tok-alice-cli-events-5d2e";
const MALLORY = "tok-mallory-cli-events-91af";
const ADMIN = "admin-cli-events-0c77";

let dir: string;
let server: CliProcess;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-cli-events-"));
  const tokens = join(dir, "tokens.json");
  writeFileSync(tokens, JSON.stringify({ [ALICE]: "alice", [MALLORY]: "mallory" }));
  server = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0", "--auth-tokens", tokens, "--admin-token", ADMIN]);
  url = await server.url();
}, 30_000);

afterAll(async () => {
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (args: string[], state = dir) => runCli(args, { env: { MCP_TASKS_STATE_DIR: state }, timeoutMs: 30_000 });

/** The id of the task a running `call` created, from the state directory's journal, once it waits for its approval. */
async function createdTaskId(state = dir): Promise<string> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const listed = await cli(["tasks", "list", url, "--token", ALICE, "--json"], state);
    const id = /"taskId":"([^"]+)"/.exec(listed.stdout)?.[1];
    // Listed once it waits: `tasks get` then shows what for.
    if (id !== undefined && listed.stdout.includes(`Waiting for approval/${id}`)) return id;
    if (Date.now() > deadline) throw new Error(`no task listed: ${listed.stdout} ${listed.stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe("mcp-tasks events emit", { timeout: 180_000 }, () => {
  it("wakes the approve task a call waits on; tasks get shows what it waits for; another principal's emit wakes nothing", async () => {
    const call = CliProcess.spawn(["call", url, "approve", '{"action":"ship v3"}', "--token", ALICE], {
      env: { MCP_TASKS_STATE_DIR: dir },
    });
    const taskId = await createdTaskId();
    const waiting = await cli(["tasks", "get", url, taskId, "--token", ALICE, "--json"]);
    expect(JSON.parse(waiting.stdout)).toMatchObject({ status: "working", statusMessage: `Waiting for approval/${taskId}` });

    const foreign = await cli(["events", "emit", url, `approval/${taskId}`, '{"approved":true}', "--token", MALLORY, "--json"]);
    expect(foreign.code).toBe(0);
    expect(JSON.parse(foreign.stdout)).toEqual({ seq: expect.any(Number), woken: 0 });
    const named = await cli([
      "events",
      "emit",
      url,
      `approval/${taskId}`,
      '{"approved":true}',
      "--token",
      MALLORY,
      "--owner",
      "local|alice",
    ]);
    expect(named.code).toBe(6);
    expect(named.stderr).toMatch(/HTTP 403.*another owner needs the admin token/);
    expect(JSON.parse((await cli(["tasks", "get", url, taskId, "--token", ALICE, "--json"])).stdout)).toMatchObject({ status: "working" });

    const emitted = await cli(["events", "emit", url, `approval/${taskId}`, '{"approved":true,"by":"release-bot"}', "--token", ALICE]);
    expect(emitted.code, emitted.stderr).toBe(0);
    expect(emitted.stdout).toMatch(/^emitted \(seq \d+\): woke 1 task\n$/);
    const exit = await call.exited;
    expect(exit.code, call.stderrText).toBe(0);
    expect(call.stdout).toContain("approved by release-bot: ship v3");
  });

  it("the admin token names the owner with --owner", async () => {
    const state = mkdtempSync(join(dir, "second-"));
    const call = CliProcess.spawn(["call", url, "approve", '{"action":"wipe staging"}', "--token", ALICE], {
      env: { MCP_TASKS_STATE_DIR: state },
    });
    const taskId = await createdTaskId(state);
    const emitted = await cli([
      "events",
      "emit",
      url,
      `approval/${taskId}`,
      '{"approved":false,"by":"ops"}',
      "--token",
      ADMIN,
      "--owner",
      "local|alice",
      "--json",
    ]);
    expect(emitted.code, emitted.stderr).toBe(0);
    expect(JSON.parse(emitted.stdout)).toEqual({ seq: expect.any(Number), woken: 1 });
    const exit = await call.exited;
    expect(exit.code).toBe(1);
    expect(call.stdout).toContain("denied by ops: wipe staging");
  });

  it("exits 2 for a payload that is no JSON or a bad name, 6 without a token, 4 when nothing answers", async () => {
    const notJson = await cli(["events", "emit", url, "deploys/done", "{nope", "--token", ALICE]);
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/the payload is not JSON/);
    const badName = await cli(["events", "emit", url, "-x", "--token", ALICE]);
    expect(badName.code).toBe(2);
    const dotted = await cli(["events", "emit", url, ".hidden", "{}", "--token", ALICE]);
    expect(dotted.code).toBe(2);
    expect(dotted.stderr).toMatch(/HTTP 400.*event name/);
    const anonymous = await cli(["events", "emit", url, "deploys/done", "{}"]);
    expect(anonymous.code).toBe(6);
    expect(anonymous.stderr).toMatch(/HTTP 401/);
    const nobody = await cli(["events", "emit", "http://127.0.0.1:9/mcp", "deploys/done", "--token", ALICE]);
    expect(nobody.code).toBe(4);
  });

  it("is listed in the help", async () => {
    const help = await runCli(["events", "emit", "--help"]);
    expect(help.code).toBe(0);
    for (const word of ["<url>", "<name>", "[json]", "--token", "--owner", "--json", "MCP_TASKS_TOKEN"])
      expect(help.stdout).toContain(word);
    const top = await runCli(["--help"]);
    expect(top.stdout).toMatch(/events\s+Emit events that wake tasks/);
  });
});
