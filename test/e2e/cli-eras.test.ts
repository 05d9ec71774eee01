/**
 * Every documented behaviour of the requestor commands, run in both protocol eras from one table:
 * real CLI processes against a real `serve --demo` (SQLite file), 2025-11-25 forced with
 * `--protocol`-equivalent MCP_TASKS_PROTOCOL, 2026-07-28 picked by server/discover as a new user
 * gets it (the default). Progress, task-support refusals and their exit codes, inline answers under
 * --json and --detach, tools list, tasks list, an unreachable server, and a connection lost under a
 * waiting call (the server killed with SIGKILL, restarted or not, or drained with SIGTERM).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createdIds, ERAS, nextCreated } from "../support/cli-eras.js";
import { BIN, CliProcess, killAll, REPO_ROOT, runCli } from "../support/cli-process.js";
import { freePort } from "../support/free-port.js";
import { hasTmux, shellQuote, TmuxTerminal } from "../support/tmux.js";
import { WHOLE_TASK_ID } from "../support/task-id-pattern.js";

const json = (stdout: string): Record<string, unknown> => JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;

/** A `serve --demo` on a fixed port and SQLite file, so it can be killed and started again at the same URL. */
class DemoServer {
  process: CliProcess | null = null;
  constructor(
    readonly port: number,
    readonly db: string,
  ) {}
  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }
  async start(extra: string[] = []): Promise<void> {
    this.process = CliProcess.spawn([
      "serve",
      "--demo",
      "--port",
      String(this.port),
      "--store",
      `sqlite:${this.db}`,
      "--poll-interval",
      "100",
      ...extra,
    ]);
    await this.process.url();
  }
  async kill9(): Promise<void> {
    await this.process?.kill("SIGKILL");
    this.process = null;
  }
  async stop(): Promise<void> {
    await this.process?.kill("SIGTERM");
    this.process = null;
  }
}

let dir: string;
let server: DemoServer;
let terminal: TmuxTerminal | null = null;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-cli-eras-"));
  server = new DemoServer(await freePort(), join(dir, "serve.db"));
  await server.start();
}, 30_000);

afterEach(async () => {
  await terminal?.close();
  terminal = null;
});

afterAll(async () => {
  // SIGKILL: a SIGTERM would drain the tasks the tests left running.
  await server.kill9();
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(ERAS)("mcp-tasks requestor commands under $name", (era) => {
  const state = () => mkdtempSync(join(dir, "state-"));
  const cli = (args: string[], options: { state?: string; env?: Record<string, string>; timeoutMs?: number } = {}) =>
    runCli(args, {
      env: { MCP_TASKS_STATE_DIR: options.state ?? state(), MCP_TASKS_PROTOCOL: era.protocol, ...options.env },
      timeoutMs: options.timeoutMs ?? 30_000,
    });

  it("--task on a tool that forbids tasks is refused before sending: exit 2 and the documented message", { timeout: 40_000 }, async () => {
    const run = await cli(["call", server.url, "echo", '{"text":"x"}', "--task"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Tool echo cannot be called as a task (execution.taskSupport is "forbidden")');
  });

  it(
    "--no-task on a tool that requires a task is refused before sending: exit 2 and the documented message",
    { timeout: 40_000 },
    async () => {
      const run = await cli(["call", server.url, "batch", '{"ms":10}', "--no-task"]);
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('Tool batch must be called as a task (execution.taskSupport is "required")');
    },
  );

  it(
    '--task --json of a quick call says which task it was, or "task": null when the server answered inline',
    { timeout: 40_000 },
    async () => {
      const run = await cli(["call", server.url, "sleep", '{"ms":10}', "--task", "--json"]);
      expect(run.code, run.stderr).toBe(0);
      const body = json(run.stdout);
      expect(body).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "slept 10 ms" }] } });
      if (era.quickTaskCall === "task") expect(body["taskId"]).toEqual(expect.any(String));
      else expect(body).toMatchObject({ task: null });
    },
  );

  it(
    "--detach prints the task id, or says on stderr that no task was created when the server answered inline",
    { timeout: 40_000 },
    async () => {
      const run = await cli(["call", server.url, "sleep", '{"ms":10}', "--detach"]);
      expect(run.code, run.stderr).toBe(0);
      if (era.quickTaskCall === "task") expect(run.stdout.trim()).toMatch(WHOLE_TASK_ID);
      else {
        expect(run.stderr).toContain("No task was created: the server answered the call at once");
        expect(run.stdout).toContain("slept 10 ms");
      }
    },
  );

  it('a plain call\'s result under --json says "task": null', { timeout: 40_000 }, async () => {
    const run = await cli(["call", server.url, "echo", '{"text":"plain"}', "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout)).toMatchObject({ task: null, status: "completed", result: { content: [{ type: "text", text: "plain" }] } });
  });

  it("tools list shows each tool's task support", { timeout: 40_000 }, async () => {
    const run = await cli(["tools", "list", server.url]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^echo\s+forbidden\s/m);
    expect(run.stdout).toMatch(/^sleep\s+optional\s/m);
    expect(run.stdout).toMatch(/^batch\s+required\s/m);
    expect(run.stdout).not.toContain("server decides");
  });

  it("a task that reports an error ends with exit 1, a cancelled one with exit 3", { timeout: 40_000 }, async () => {
    const failed = await cli(["call", server.url, "fail", '{"message":"boom"}', "--task"]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain("boom");
    const dirState = state();
    const id = (await cli(["call", server.url, "batch", '{"ms":60000}', "--detach"], { state: dirState })).stdout.trim();
    expect((await cli(["tasks", "cancel", server.url, id], { state: dirState })).code).toBe(0);
    const result = await cli(["tasks", "result", server.url, id], { state: dirState });
    expect(result.code).toBe(3);
  });

  it("a task that ends in a JSON-RPC error prints it as every command's error is, exit 1 (T-RES-4)", { timeout: 40_000 }, async () => {
    const run = await cli(["call", server.url, "throw", '{"code":-32042,"message":"quota"}', "--task"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^mcp-tasks: error -32042: quota$/m);
  });

  it(
    "without a terminal, a task's sampling request is refused with one note, and the call ends with the refusal's error, exit 1",
    { timeout: 40_000 },
    async () => {
      const run = await cli(["call", server.url, "sample", '{"prompt":"hi"}', "--task"]);
      expect(run.code, run.stderr).toBe(1);
      expect(run.stderr.match(/there is no terminal to answer: refused/g)).toHaveLength(1);
      expect(run.stderr).toMatch(/^mcp-tasks: error -1: No one is at the terminal to answer the sampling request$/m);
    },
  );

  it("under --json, the error that ends a waiting call names its task and the status the call last saw", { timeout: 40_000 }, async () => {
    const run = await cli(["call", server.url, "sample", '{"prompt":"hi"}', "--task", "--json"]);
    expect(run.code, run.stderr).toBe(1);
    const printed = json(run.stdout);
    expect(printed["taskId"]).toMatch(WHOLE_TASK_ID);
    // 2025-11-25 sends the refusal, which fails the task; 2026-07-28 cannot, so the question stays open.
    expect(printed).toMatchObject({ status: era.reasksOpenQuestion ? "input_required" : "failed", error: { code: -1 } });
  });

  it(
    `tasks list reads from the ${era.listSource} and says so under --json; the journal-only listing says how to ask the server`,
    { timeout: 40_000 },
    async () => {
      const dirState = state();
      const id = (await cli(["call", server.url, "batch", '{"ms":60000}', "--detach"], { state: dirState })).stdout.trim();
      const listed = await cli(["tasks", "list", server.url, "--json"], { state: dirState });
      expect(listed.code, listed.stderr).toBe(0);
      expect(json(listed.stdout)).toMatchObject({
        source: era.listSource,
        tasks: expect.arrayContaining([expect.objectContaining({ taskId: id, status: "working" })]),
      });
      const table = await cli(["tasks", "list", server.url], { state: dirState });
      if (era.listSource === "journal") {
        expect(table.stderr).toContain("Listed from the local journal");
        expect(table.stderr).toContain(`mcp-tasks tasks list ${server.url} --protocol 2025-11-25`);
      } else expect(table.stderr).not.toContain("journal");
      await cli(["tasks", "cancel", server.url, id], { state: dirState });
    },
  );

  it(
    "an --answer that does not fit the question's schema is not sent: exit 2 naming the field, and the question stays open for a later --answer",
    { timeout: 60_000 },
    async () => {
      const dirState = state();
      const run = await cli(["call", server.url, "ask", '{"question":"Name?"}', "--task", "--answer", '{"answer":5}'], { state: dirState });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain('does not fit the question "Name?": Invalid field "answer": expected a string');
      const id = /mcp-tasks tasks result \S+ ([0-9a-z]{9}[0-9a-f]{32}) --answer/.exec(run.stderr)?.[1];
      expect(id, run.stderr).toBeDefined();
      // The run ended at once, but after its journal had the task: later commands find its era there.
      expect(createdIds(dirState)).toContain(id);
      expect(json((await cli(["tasks", "get", server.url, id as string, "--json"], { state: dirState })).stdout)).toMatchObject({
        status: "input_required",
      });
      if (!era.reasksOpenQuestion) {
        await cli(["tasks", "cancel", server.url, id as string], { state: dirState });
        return;
      }
      const missing = await cli(["tasks", "result", server.url, id as string, "--answer", "{}"], { state: dirState });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('Missing required field "answer"');
      const answered = await cli(["tasks", "result", server.url, id as string, "--answer", '{"answer":"Ada"}', "--json"], {
        state: dirState,
      });
      expect(answered.code, answered.stderr).toBe(0);
      expect(json(answered.stdout)).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "answer: Ada" }] } });
    },
  );

  it("a wrong path reads as HTTP 404 with the /mcp path suggested, exit 4", { timeout: 40_000 }, async () => {
    const wrong = server.url.replace(/\/mcp$/, "/mpc");
    const run = await cli(["tools", "list", wrong], { env: { MCP_TASKS_PROTOCOL: era.name } });
    expect(run.code).toBe(4);
    expect(run.stderr).toContain(`Cannot connect to ${wrong}: HTTP 404, no MCP endpoint at this path; did you mean ${server.url}?`);
    expect(run.stderr).not.toContain("Error POSTing");
  });

  it(
    "the server's root (its web view, which refuses POST with 405) reads as no MCP endpoint there, with the /mcp path suggested, exit 4",
    { timeout: 40_000 },
    async () => {
      const root = server.url.replace(/\/mcp$/, "/");
      const run = await cli(["tools", "list", root], { env: { MCP_TASKS_PROTOCOL: era.name } });
      expect(run.code).toBe(4);
      expect(run.stderr).toContain(`Cannot connect to ${root}: HTTP 405, no MCP endpoint at this path; did you mean ${server.url}?`);
      expect(run.stderr).not.toContain("Error POSTing");
    },
  );

  it(
    "tasks cancel of a task that has already ended says so and exits 1 (2025-11-25 refuses it, T-CANCEL-2; 2026-07-28 acknowledges it, X-CANCEL-6)",
    { timeout: 40_000 },
    async () => {
      const dirState = state();
      const id = (await cli(["call", server.url, "batch", '{"ms":1500}', "--detach"], { state: dirState })).stdout.trim();
      expect(id).toMatch(WHOLE_TASK_ID);
      expect((await cli(["tasks", "result", server.url, id], { state: dirState })).code).toBe(0);
      const run = await cli(["tasks", "cancel", server.url, id], { state: dirState });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain("Cannot cancel task: already in terminal status 'completed'");
      const json = await cli(["tasks", "cancel", server.url, id, "--json"], { state: dirState });
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toMatchObject({
        taskId: id,
        error: { code: -32602, message: "Cannot cancel task: already in terminal status 'completed'" },
      });
    },
  );

  it("tasks cancel of a task already cancelled says so and exits 1, the first cancel 0", { timeout: 40_000 }, async () => {
    const dirState = state();
    const id = (await cli(["call", server.url, "batch", '{"ms":30000}', "--detach"], { state: dirState })).stdout.trim();
    expect(id).toMatch(WHOLE_TASK_ID);
    expect((await cli(["tasks", "cancel", server.url, id], { state: dirState })).code).toBe(0);
    const again = await cli(["tasks", "cancel", server.url, id], { state: dirState });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("Cannot cancel task: already in terminal status 'cancelled'");
  });

  it("shows the task's progress on the bar in a terminal (T-PROG-1; 2026-07-28: from tasks/get)", { timeout: 40_000 }, async () => {
    if (!hasTmux()) throw new Error("tmux is not installed: the pseudo-terminal tests need it (apt-get install tmux)");
    const dirState = state();
    const command = [process.execPath, BIN, "call", server.url, "sleep", '{"ms":4000,"steps":4}', "--task"].map(shellQuote).join(" ");
    terminal = await TmuxTerminal.start(
      `cd ${shellQuote(REPO_ROOT)} && MCP_TASKS_PROTOCOL=${era.protocol} MCP_TASKS_STATE_DIR=${shellQuote(dirState)} ${command}; echo "EXIT=$?"; sleep 600`,
    );
    await terminal.waitFor(/[123]\/4 \d+%/, 15_000);
    const screen = await terminal.waitFor("EXIT=", 20_000);
    expect(screen).toMatch(/✔ task \S+ completed in/);
    expect(screen).toContain("EXIT=0");
  });
});

describe.each(ERAS)("mcp-tasks under $name when the server is down or goes away", (era) => {
  let other: DemoServer;
  let stateDir: string;
  const cli = (args: string[], env: Record<string, string> = {}, timeoutMs = 60_000) =>
    runCli(args, { env: { MCP_TASKS_STATE_DIR: stateDir, MCP_TASKS_PROTOCOL: era.protocol, ...env }, timeoutMs });

  beforeAll(async () => {
    stateDir = mkdtempSync(join(dir, `down-${era.name}-`));
    other = new DemoServer(await freePort(), join(stateDir, "serve.db"));
    await other.start();
  }, 30_000);

  afterAll(async () => {
    await other.kill9();
  });

  it(
    "an unreachable server (its era already cached) reads as the connection's cause with exit 4 for every command, tasks list included",
    { timeout: 90_000 },
    async () => {
      const id = (await cli(["call", other.url, "batch", '{"ms":60000}', "--detach"])).stdout.trim();
      expect(id).toMatch(/^[0-9a-z]{9}[0-9a-f]{32}$/);
      await other.kill9();
      try {
        for (const args of [
          ["tasks", "get", other.url, id],
          ["tasks", "result", other.url, id],
          ["tasks", "cancel", other.url, id],
          ["tasks", "list", other.url],
          ["tools", "list", other.url],
          ["call", other.url, "echo", '{"text":"x"}'],
        ]) {
          const run = await cli(args, { MCP_TASKS_REATTACH_MS: "0" });
          expect(run.code, `${args.join(" ")}: ${run.stderr}`).toBe(4);
          expect(run.stderr, args.join(" ")).toContain("connection refused");
          expect(run.stderr, args.join(" ")).not.toContain("fetch failed");
          expect(run.stderr, args.join(" ")).not.toContain("no tasks");
        }
      } finally {
        await other.start();
      }
    },
  );

  it("a waiting call follows its task across a SIGKILL and restart of the server to the real end", { timeout: 90_000 }, async () => {
    const before = createdIds(stateDir).length;
    const call = CliProcess.spawn(["call", other.url, "steps", '{"count":6,"ms":500}', "--task", "--json"], {
      env: { MCP_TASKS_STATE_DIR: stateDir, MCP_TASKS_PROTOCOL: era.protocol },
    });
    await nextCreated(stateDir, before);
    // A step or two runs (checkpointed) before the kill.
    await new Promise((resolve) => setTimeout(resolve, 800));
    await other.kill9();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await other.start();
    const exit = await call.exited;
    expect(exit.code, call.stderrText).toBe(0);
    expect(json(call.stdout)).toMatchObject({ status: "completed", result: { structuredContent: { count: 6 } } });
    expect(call.stderrText).not.toMatch(/failed/);
  });

  it(
    "a waiting call follows its task across a drain (SIGTERM) that hands it back, and the restart that runs it again, to the real end",
    { timeout: 90_000 },
    async () => {
      await other.kill9();
      await other.start(["--drain-timeout", "200"]);
      const before = createdIds(stateDir).length;
      const call = CliProcess.spawn(["call", other.url, "steps", '{"count":6,"ms":500}', "--task", "--json"], {
        env: { MCP_TASKS_STATE_DIR: stateDir, MCP_TASKS_PROTOCOL: era.protocol },
      });
      await nextCreated(stateDir, before);
      await new Promise((resolve) => setTimeout(resolve, 800));
      // The drain outlasts nothing: the task is handed back, and a waiter is told to come back later.
      await other.stop();
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await other.start();
      const exit = await call.exited;
      expect(exit.code, call.stderrText).toBe(0);
      expect(json(call.stdout)).toMatchObject({ status: "completed", result: { structuredContent: { count: 6 } } });
      expect(call.stderrText).not.toMatch(/failed|shutting down/);
    },
  );

  it(
    "a waiting call whose server does not come back says the task may still be running and how to collect it, exit 4 — never failed",
    { timeout: 90_000 },
    async () => {
      const before = createdIds(stateDir).length;
      const call = CliProcess.spawn(["call", other.url, "batch", '{"ms":30000}'], {
        env: { MCP_TASKS_STATE_DIR: stateDir, MCP_TASKS_PROTOCOL: era.protocol, MCP_TASKS_REATTACH_MS: "2000" },
      });
      await nextCreated(stateDir, before);
      await other.kill9();
      try {
        const exit = await call.exited;
        expect(exit.code, call.stderrText).toBe(4);
        expect(call.stderrText).toMatch(
          new RegExp(
            `connection lost; the task may still be running: mcp-tasks tasks result ${other.url.replace(/[.]/g, "\\.")} [0-9a-z]{9}[0-9a-f]{32}`,
          ),
        );
        expect(call.stderrText).not.toMatch(/\bfailed\b/);
      } finally {
        await other.start();
      }
    },
  );
});

describe("mcp-tasks call --stdio --detach", () => {
  it(
    "exits as soon as the task id is printed; the spawned server finishes the task in its durable store",
    { timeout: 90_000 },
    async () => {
      const stateDir = mkdtempSync(join(dir, "stdio-"));
      const serve = `${shellQuote(process.execPath)} ${shellQuote(BIN)} serve --stdio --demo --store sqlite:${shellQuote(join(stateDir, "stdio.db"))}`;
      const call = CliProcess.spawn(["call", "--stdio", serve, "batch", '{"ms":8000}', "--detach"], {
        env: { MCP_TASKS_STATE_DIR: stateDir },
      });
      const id = await call.stdoutLines.waitFor((line) => /^[0-9a-z]{9}[0-9a-f]{32}$/.test(line), "the task id", 30_000);
      const printed = Date.now();
      const exit = await call.exited;
      expect(exit.code, call.stderrText).toBe(0);
      // Not the 8 s of the task: detach means return now.
      expect(Date.now() - printed).toBeLessThan(2_000);
      // The spawned server holds its SQLite file until it is done; then the task reads completed.
      const deadline = Date.now() + 45_000;
      let got = await runCli(["tasks", "get", "--stdio", serve, id, "--json"], {
        env: { MCP_TASKS_STATE_DIR: stateDir },
        timeoutMs: 30_000,
      });
      while (got.code !== 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        got = await runCli(["tasks", "get", "--stdio", serve, id, "--json"], { env: { MCP_TASKS_STATE_DIR: stateDir }, timeoutMs: 30_000 });
      }
      expect(got.code, got.stderr).toBe(0);
      expect(json(got.stdout)).toMatchObject({ taskId: id, status: "completed" });
    },
  );
});
