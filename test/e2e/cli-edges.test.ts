/**
 * The CLI's rough edges: `tools list`, a suggestion for a misspelt tool, `tasks list`
 * as a table with filters, connection errors that say their cause, authentication failures with
 * their own exit code, and a detach hint naming the real target. Real `mcp-tasks` processes
 * against real `mcp-tasks serve --demo` processes over HTTP, no terminal.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CliProcess, killAll, runCli } from "../support/cli-process.js";

let scratch: string;
let state: string;
let demo: CliProcess;
let guarded: CliProcess;
let demoUrl: string;
let guardedUrl: string;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "mcp-tasks-cli-edges-"));
  const tokens = join(scratch, "tokens.json");
  writeFileSync(tokens, JSON.stringify({ "alice-token": "alice" }));
  const serve = ["serve", "--demo", "--store", "memory", "--port", "0", "--poll-interval", "50", "--no-web"];
  demo = CliProcess.spawn(serve);
  guarded = CliProcess.spawn([...serve, "--auth-tokens", tokens]);
  demoUrl = new URL("/mcp", await demo.url()).href;
  guardedUrl = new URL("/mcp", await guarded.url()).href;
}, 60_000);
// Not after each test: killAll would take the servers, which live for the file (runCli has its deadline).
afterAll(async () => {
  await killAll();
  rmSync(scratch, { recursive: true, force: true });
});
beforeEach(() => {
  state = mkdtempSync(join(scratch, "state-"));
});

const cli = (args: string[], stateDir = state) => runCli(args, { env: { MCP_TASKS_STATE_DIR: stateDir }, timeoutMs: 30_000 });
/** A table printed by the CLI: its lines, each split into cells at runs of two or more spaces. */
const table = (stdout: string) =>
  stdout
    .trimEnd()
    .split("\n")
    .map((line) => line.split(/ {2,}/));
const created = async (args: string[], stateDir = state): Promise<string> => {
  const run = await cli([...args, "--json"], stateDir);
  const taskId = (JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "{}") as { taskId?: string }).taskId;
  if (taskId === undefined) throw new Error(`no task created: ${run.stdout}${run.stderr}`);
  return taskId;
};

describe("mcp-tasks tools list", { timeout: 60_000 }, () => {
  it("prints the tools as a table: name, taskSupport (T-TOOL-2, forbidden when absent), paused and the description's first line", async () => {
    const run = await cli(["tools", "list", demoUrl]);
    expect(run.code).toBe(0);
    const [header, ...rows] = table(run.stdout);
    expect(header).toEqual(["name", "taskSupport", "paused", "description"]);
    // No tool is paused: each row's paused cell is empty.
    expect(rows).toContainEqual(["echo", "forbidden", "Echoes text (not callable as a task)."]);
    expect(rows).toContainEqual(["batch", "required", "Like sleep, but must be called as a task."]);
    // The CLI declares capabilities.tasks: it follows tasks itself, so it is not served the fallback's task_* tools (docs/hosts/README.md).
    expect(rows.map((r) => r[0])).toEqual(["echo", "sleep", "fail", "throw", "ask", "nap", "approve", "sample", "batch", "steps"]);
  });

  it("--json prints the raw tools/list tools, schemas and execution included", async () => {
    const run = await cli(["tools", "list", demoUrl, "--json"]);
    expect(run.code).toBe(0);
    const { tools } = JSON.parse(run.stdout) as { tools: Array<Record<string, unknown>> };
    expect(tools.find((t) => t["name"] === "sleep")).toMatchObject({
      inputSchema: { type: "object" },
      execution: { taskSupport: "optional" },
    });
  });
});

describe("mcp-tasks call with an unknown tool", { timeout: 60_000 }, () => {
  it("exit 2 with a suggestion of the closest listed tool", async () => {
    const run = await cli(["call", demoUrl, "slep", '{"ms":10}']);
    expect(run.stderr).toContain('unknown tool "slep"');
    expect(run.stderr).toContain('Did you mean "sleep"?');
    expect(run.code).toBe(2);
  });

  it("no suggestion when no tool is a typo away", async () => {
    const run = await cli(["call", demoUrl, "frobnicate"]);
    expect(run.stderr).toContain('unknown tool "frobnicate"');
    expect(run.stderr).not.toContain("Did you mean");
    expect(run.code).toBe(2);
  });
});

describe("mcp-tasks call --stdio with an era whose requests stand alone", { timeout: 60_000 }, () => {
  it("exit 2 saying 2026-07-28 needs an http(s) target and that stdio speaks 2025-11-25", async () => {
    const run = await runCli(["call", "--stdio", "node -e 0", "--protocol", "2026-07-28", "echo", '{"text":"hi"}']);
    expect(run.stderr).toContain("--protocol 2026-07-28 needs an http(s) <target>: over --stdio the CLI speaks 2025-11-25");
    expect(run.code).toBe(2);
  });
});

describe("mcp-tasks tasks list", { timeout: 60_000 }, () => {
  it("a table with a header: id, tool (from the journal), status, age, message", async () => {
    const id = await created(["call", demoUrl, "fail", '{"message":"disk full"}', "--task"]);
    const run = await cli(["tasks", "list", demoUrl]);
    expect(run.code).toBe(0);
    const [header, ...rows] = table(run.stdout);
    expect(header).toEqual(["id", "tool", "status", "age", "message"]);
    expect(rows.find((r) => r[0] === id)).toEqual([id, "fail", "failed", expect.stringMatching(/^\d+s$/), "disk full"]);
  });

  it("a task this CLI's journal does not know shows — as its tool", async () => {
    const elsewhere = mkdtempSync(join(scratch, "other-"));
    const id = await created(["call", demoUrl, "sleep", '{"ms":10}', "--task"], elsewhere);
    const run = await cli(["tasks", "list", demoUrl]);
    expect(
      table(run.stdout)
        .find((r) => r[0] === id)
        ?.slice(1, 3),
    ).toEqual(["—", "completed"]);
  });

  it("--status keeps only the tasks in that status", async () => {
    const failed = await created(["call", demoUrl, "fail", '{"message":"x"}', "--task"]);
    const completed = await created(["call", demoUrl, "sleep", '{"ms":10}', "--task"]);
    const run = await cli(["tasks", "list", demoUrl, "--status", "failed"]);
    const rows = table(run.stdout).slice(1);
    expect(rows.map((r) => r[0])).toContain(failed);
    expect(rows.map((r) => r[0])).not.toContain(completed);
    expect(new Set(rows.map((r) => r[2]))).toEqual(new Set(["failed"]));
  });

  it("--limit n keeps the n newest", async () => {
    await created(["call", demoUrl, "sleep", '{"ms":10}', "--task"]);
    const newest = await created(["call", demoUrl, "sleep", '{"ms":10}', "--task"]);
    const run = await cli(["tasks", "list", demoUrl, "--limit", "1", "--json"]);
    const { tasks } = JSON.parse(run.stdout) as { tasks: Array<{ taskId: string }> };
    expect(tasks.map((t) => t.taskId)).toEqual([newest]);
  });
});

describe("connection and authentication errors", { timeout: 60_000 }, () => {
  it("a refused connection says so (ECONNREFUSED), exit 4", async () => {
    const port = await closedPort();
    const run = await cli(["call", `http://127.0.0.1:${port}/mcp`, "echo", '{"text":"x"}']);
    expect(run.stderr).toContain(`Cannot connect to http://127.0.0.1:${port}/mcp: connection refused`);
    expect(run.stderr).toContain("ECONNREFUSED");
    expect(run.code).toBe(4);
  });

  it("a host name that does not resolve says so (DNS), exit 4", async () => {
    // .invalid never resolves (RFC 6761): ENOTFOUND, or EAI_AGAIN without a reachable resolver.
    const run = await cli(["tools", "list", "http://no-such-host.invalid/mcp"]);
    expect(run.stderr).toContain("cannot resolve the host name no-such-host.invalid");
    expect(run.stderr).toMatch(/ENOTFOUND|EAI_AGAIN/);
    expect(run.code).toBe(4);
  });

  it("no token where the server requires one (HTTP 401): an authentication failure, exit 6", async () => {
    const run = await cli(["call", guardedUrl, "echo", '{"text":"x"}']);
    expect(run.stderr).toContain(`Authentication failed at ${guardedUrl}: the server requires a token`);
    expect(run.code).toBe(6);
  });

  it("a token the server does not accept (HTTP 401): an authentication failure, exit 6", async () => {
    const run = await cli(["tasks", "list", guardedUrl, "--token", "wrong"]);
    expect(run.stderr).toContain("the server did not accept the token");
    expect(run.code).toBe(6);
  });
});

describe("detaching", { timeout: 60_000 }, () => {
  it("Ctrl-C without a terminal detaches (exit 5) and the hint names the real target and task", async () => {
    const call = CliProcess.spawn(["call", demoUrl, "sleep", '{"ms":30000}', "--task"], { env: { MCP_TASKS_STATE_DIR: state } });
    const taskId = await journalledTask(join(state, "journal.jsonl"));
    const exit = await call.kill("SIGINT");
    expect(exit.code).toBe(5);
    expect(call.stderrText).toContain(`Collect it with: mcp-tasks tasks result ${demoUrl} ${taskId}`);
  });
});

/** A port nothing listens on: one the kernel just handed out and we closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return address.port;
}

/** The id of the first task the journal records as created (the CLI writes it once the task exists). */
async function journalledTask(path: string, timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (existsSync(path)) {
      const entry = readFileSync(path, "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as { op: string; taskId: string })
        .find((e) => e.op === "created");
      if (entry) return entry.taskId;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("no task was created in time");
}

describe("help texts", { timeout: 60_000 }, () => {
  it("the top-level help names both protocol revisions", async () => {
    const run = await runCli(["--help"]);
    expect(run.stdout.replace(/\s+/g, " ")).toContain("both protocol revisions (2025-11-25, and 2026-07-28 with the tasks extension)");
  });

  it.each(["call", "tasks list", "tasks result", "tools list"])(
    "%s --help: named arguments, the ordinary options before the OAuth block",
    async (command) => {
      const run = await runCli([...command.split(" "), "--help"]);
      expect(run.code).toBe(0);
      expect(run.stdout).not.toContain("positionals");
      expect(run.stdout).toMatch(/^Arguments:\n {2}target /m);
      expect(run.stdout.indexOf("\nOptions:")).toBeGreaterThan(0);
      expect(run.stdout.indexOf("\nOptions:")).toBeLessThan(run.stdout.indexOf("\nOAuth ("));
    },
  );

  it("serve --help lists every demo tool, steps included", async () => {
    const run = await runCli(["serve", "--help"]);
    expect(run.stdout.replace(/\s+/g, " ")).toContain("(echo, sleep, fail, throw, ask, nap, approve, sample, batch, steps)");
  });
});

describe("serve that cannot start", { timeout: 60_000 }, () => {
  it("a --port in use is one line naming --port, exit 1", async () => {
    const taken = new URL(demoUrl).port;
    const run = await runCli(["serve", "--demo", "--port", taken, "--store", "memory"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `mcp-tasks: cannot listen on 127.0.0.1:${taken}: the port is in use (another server?); choose another with --port (0 picks a free one)`,
    );
    expect(run.stderr).not.toContain("EADDRINUSE: address already in use");
  });

  it("an unreachable PostgreSQL --store is one line naming --store, its password hidden, exit 1", async () => {
    const run = await runCli(["serve", "--demo", "--port", "0", "--store", "postgres://u:secret@127.0.0.1:1/x"], { timeoutMs: 40_000 });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("mcp-tasks: cannot reach the PostgreSQL store postgres://u:***@127.0.0.1:1/x: connection refused");
    expect(run.stderr).toContain("check --store");
    expect(run.stderr).not.toContain("secret");
  });
});
