/**
 * `mcp-tasks call` and `mcp-tasks tasks …` as a 2026-07-28 requestor, real CLI
 * processes against our own server (serveHttp with both eras on one endpoint, a real SQLite file):
 * the era comes from server/discover (and is cached in the state directory), a 2025-only server
 * (the SDK's McpServer) gets 2025-11-25, and a task's era is journaled so `tasks result <id>`
 * resumes it in that era — also after the server was killed and restarted.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { BIN, CliProcess, killAll, REPO_ROOT, runCli } from "../support/cli-process.js";
import { startSdkTaskServer, type SdkTaskServer } from "../support/sdk-task-server.js";
import { startTasksExtServer, type TasksExtServer } from "../support/tasks-ext-server.js";
import { hasTmux, shellQuote, TmuxTerminal } from "../support/tmux.js";

let server: TasksExtServer;
let state: string;
let terminal: TmuxTerminal | null = null;

beforeAll(async () => {
  server = await startTasksExtServer({ app: { pollIntervalMs: 100 } });
}, 30_000);

beforeEach(() => {
  state = mkdtempSync(join(tmpdir(), "mcp-tasks-cli26-"));
});

afterEach(async () => {
  await terminal?.close();
  terminal = null;
  await killAll();
  rmSync(state, { recursive: true, force: true });
});

afterAll(async () => {
  await server?.close();
});

const cli = (args: string[], timeoutMs = 30_000) =>
  runCli(args, { env: { MCP_TASKS_STATE_DIR: state, MCP_TASKS_PROTOCOL: "auto" }, timeoutMs });

function journal(): Array<Record<string, unknown>> {
  return readFileSync(join(state, "journal.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function cachedEras(): Array<{ target: string; revision: string }> {
  return readdirSync(join(state, "eras")).map(
    (name) => JSON.parse(readFileSync(join(state, "eras", name), "utf8")) as { target: string; revision: string },
  );
}

const json = (stdout: string): Record<string, unknown> => JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;

describe("mcp-tasks requestor commands under 2026-07-28", { timeout: 60_000 }, () => {
  it("call picks 2026-07-28 from server/discover, caches it per target, and journals the task with its era", async () => {
    const run = await cli(["call", server.url.href, "slow_compute", '{"seconds":1,"label":"cli"}', "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout)).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "Computed cli in 1 s" }] } });
    expect(cachedEras()).toEqual([expect.objectContaining({ target: server.url.href, revision: "2026-07-28" })]);
    expect(journal().find((e) => e["op"] === "created")).toMatchObject({
      name: "slow_compute",
      protocol: "2026-07-28",
      target: server.url.href,
    });
    expect(journal().some((e) => e["session"] !== undefined)).toBe(false);
  });

  it("falls back to 2025-11-25 against a server that refuses server/discover (the SDK's McpServer), and caches that", async () => {
    const sdk: SdkTaskServer = await startSdkTaskServer();
    try {
      const run = await cli(["call", sdk.url, "sleep", '{"ms":10}', "--task", "--json"]);
      expect(run.code, run.stderr).toBe(0);
      expect(json(run.stdout)).toMatchObject({ status: "completed" });
      expect(cachedEras()).toEqual([expect.objectContaining({ target: sdk.url, revision: "2025-11-25" })]);
      expect(journal().find((e) => e["op"] === "created")).toMatchObject({ protocol: "2025-11-25" });
    } finally {
      await sdk.close();
    }
  });

  it("--protocol 2025-11-25 forces a session on a server that speaks both, without asking server/discover", async () => {
    const run = await cli([
      "call",
      server.url.href,
      "slow_compute",
      '{"seconds":0.1,"label":"old"}',
      "--task",
      "--protocol",
      "2025-11-25",
      "--json",
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(journal().find((e) => e["op"] === "created")).toMatchObject({ protocol: "2025-11-25", session: expect.any(String) });
    expect(() => readdirSync(join(state, "eras"))).toThrow();
  });

  it("answers a task's elicitation with --answer, sent through tasks/update (X-UPD-1)", async () => {
    const run = await cli(["call", server.url.href, "confirm_delete", '{"filename":"a.txt"}', "--answer", '{"confirm":true}', "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout)).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "Deleted a.txt" }] } });
  });

  it("answers a plain call's two MRTR rounds with two --answer options, in order (X-MRTR-1)", async () => {
    const run = await cli([
      "call",
      server.url.href,
      "ask_plain",
      '{"greeting":"Hi"}',
      "--answer",
      '{"name":"Ada"}',
      "--answer",
      '{"sure":true}',
      "--json",
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout)).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "Hi Ada (sure)" }] } });
  });

  it("answers a tool's gather before its task exists (MRTR), then follows the task (X-MRTR-2)", async () => {
    const run = await cli(["call", server.url.href, "test_tool_with_task", "{}", "--answer", '{"name":"Grace"}', "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout)).toMatchObject({
      status: "completed",
      result: { content: [{ type: "text", text: "Hello, Grace! The task finished." }] },
    });
  });

  it("without a terminal or --answer, a task's elicitation is answered cancel, as under 2025-11-25", async () => {
    const run = await cli(["call", server.url.href, "confirm_delete", '{"filename":"kept.txt"}', "--json"]);
    expect(run.stderr).toContain('there is no terminal to answer: answered "cancel"');
    expect(json(run.stdout)).toMatchObject({ result: { content: [{ type: "text", text: expect.not.stringContaining("Deleted") }] } });
  });

  it("--detach, then tasks get, tasks cancel and tasks get again: cancelled (X-CANCEL-1)", async () => {
    const detached = await cli(["call", server.url.href, "slow_compute", '{"seconds":60,"label":"x"}', "--detach"]);
    expect(detached.code, detached.stderr).toBe(0);
    const id = detached.stdout.trim();
    const got = await cli(["tasks", "get", server.url.href, id, "--json"]);
    expect(json(got.stdout)).toMatchObject({ taskId: id, status: "working" });
    const cancelled = await cli(["tasks", "cancel", server.url.href, id, "--json"]);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(json(cancelled.stdout)).toMatchObject({ taskId: id, status: "cancelled" });
    expect(json((await cli(["tasks", "get", server.url.href, id, "--json"])).stdout)).toMatchObject({ status: "cancelled" });
  });

  it("tasks result answers a detached task's question with --answer (a later run, a new process)", async () => {
    const detached = await cli(["call", server.url.href, "confirm_delete", '{"filename":"later.txt"}', "--detach"]);
    const id = detached.stdout.trim();
    const run = await cli(["tasks", "result", server.url.href, id, "--answer", '{"confirm":true}', "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout)).toMatchObject({
      taskId: id,
      status: "completed",
      result: { content: [{ type: "text", text: "Deleted later.txt" }] },
    });
  });

  it("tasks list reads the journaled tasks of the target with tasks/get (2026-07-28 has no tasks/list)", async () => {
    const id = (await cli(["call", server.url.href, "slow_compute", '{"seconds":60,"label":"l"}', "--detach"])).stdout.trim();
    const run = await cli(["tasks", "list", server.url.href, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout)["tasks"]).toEqual([expect.objectContaining({ taskId: id, status: "working" })]);
    await cli(["tasks", "cancel", server.url.href, id]);
  });

  it("tasks list also reads the tasks this state directory created on the target under 2025-11-25: a server that speaks both reads them by id (X-LEG-5)", async () => {
    const older = (
      await cli(["call", server.url.href, "slow_compute", '{"seconds":60,"label":"a"}', "--task", "--detach", "--protocol", "2025-11-25"])
    ).stdout.trim();
    const newer = (await cli(["call", server.url.href, "slow_compute", '{"seconds":60,"label":"b"}', "--detach"])).stdout.trim();
    const run = await cli(["tasks", "list", server.url.href, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout)).toMatchObject({ source: "journal" });
    expect(json(run.stdout)["tasks"]).toEqual(
      expect.arrayContaining([expect.objectContaining({ taskId: older }), expect.objectContaining({ taskId: newer })]),
    );
    for (const id of [older, newer]) await cli(["tasks", "cancel", server.url.href, id]);
  });

  it("tasks result resumes a task by id in the era the journal recorded, after the server was killed (SIGKILL) and restarted on the same SQLite file", async () => {
    const args = (port: string) => ["serve", "--demo", "--port", port, "--store", `sqlite:${join(state, "serve.db")}`];
    const first = CliProcess.spawn(args("0"));
    const url = await first.url();
    const detached = await cli(["call", url, "batch", '{"ms":3000}', "--detach"]);
    expect(detached.code, detached.stderr).toBe(0);
    const id = detached.stdout.trim();
    expect((await first.kill("SIGKILL")).signal).toBe("SIGKILL");
    const second = CliProcess.spawn(args(new URL(url).port));
    await second.url();
    const run = await cli(["tasks", "result", url, id, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout)).toMatchObject({
      taskId: id,
      status: "completed",
      result: { content: [{ type: "text", text: "slept 3000 ms" }] },
    });
    await second.kill("SIGTERM");
  });
});

describe("mcp-tasks call under 2026-07-28 in a terminal", { timeout: 60_000 }, () => {
  beforeAll(() => {
    if (!hasTmux()) throw new Error("tmux is not installed: the pseudo-terminal tests of `mcp-tasks call` need it (apt-get install tmux)");
  });

  async function runInTerminal(args: string[]): Promise<TmuxTerminal> {
    const command = [process.execPath, BIN, ...args].map(shellQuote).join(" ");
    terminal = await TmuxTerminal.start(
      `cd ${shellQuote(REPO_ROOT)} && MCP_TASKS_PROTOCOL=auto MCP_TASKS_STATE_DIR=${shellQuote(state)} ${command}; echo "EXIT=$?"; sleep 600`,
    );
    return terminal;
  }

  it("prompts for a task's elicitation and sends the typed answer through tasks/update", async () => {
    const term = await runInTerminal(["call", server.url.href, "confirm_delete", '{"filename":"t.txt"}']);
    const asked = await term.waitFor("? confirm");
    expect(asked).toContain("Delete t.txt?");
    await term.type("y");
    await term.press("Enter");
    const screen = await term.waitFor("EXIT=");
    expect(screen).toContain("Deleted t.txt");
    expect(screen).toContain("EXIT=0");
  });

  it("draws the progress bar of a plain call from its SSE answer and ends with the summary line", async () => {
    const term = await runInTerminal(["call", server.url.href, "progress_plain", '{"steps":40}']);
    const screen = await term.waitFor("EXIT=");
    expect(screen).toMatch(/^✔ completed in \d+\.\ds$/m);
    expect(screen).toContain("40 steps");
    expect(screen).toContain("EXIT=0");
  });
});
