/**
 * The `mcp-tasks serve` CLI as users run it: `node bin/mcp-tasks-dev.js …` in a real process.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { ExitCode } from "../../src/cli/exit-codes.js";
import { callToolAsTask, getTask, listTasks, taskResult } from "../support/conformance.js";
import { CliProcess, cliEnv, killAll, REPO_ROOT, runCli } from "../support/cli-process.js";
import { connectHttpClient, rawPost, type ConnectOptions, type HttpClient } from "../support/http-fixture.js";
import { freePort } from "../support/free-port.js";

const clients: HttpClient[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await killAll();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-cli-"));
  dirs.push(dir);
  return dir;
}

async function connect(url: string, options: ConnectOptions = {}): Promise<HttpClient> {
  const c = await connectHttpClient(url, options);
  clients.push(c);
  return c;
}

/** A flag as shown (name and argument placeholder) → its stated default and environment variable. */
type FlagTable = Map<string, { default?: string; env?: string }>;

/** `(…default: X…)` or `(…default X…)`, quotes dropped; `(…env: NAME…)`. Only inside parentheses. */
function defaultsOf(description: string): { default?: string; env?: string } {
  const value = /\((?:[^()]*?, )?default:? ("?)([^,()]*?)\1(?:, [^()]*)?\)/.exec(description)?.[2];
  const env = /\((?:[^()]*?, )?env: ([A-Z_]+)/.exec(description)?.[1];
  return { ...(value !== undefined && { default: value }), ...(env !== undefined && { env }) };
}

/** The `mcp-tasks serve [options]` block of the CLI guide (docs/cli.md). */
function documentedServeFlags(guide: string): FlagTable {
  const block = guide.split("\nmcp-tasks serve [options]\n")[1]?.split("\n\n")[0] ?? "";
  const table: FlagTable = new Map();
  for (const line of block.split("\n")) {
    const match = /^ {2}(--\S+(?: [<[][^>\]]+[>\]])?) {2,}(.*)$/.exec(line);
    if (match?.[1] !== undefined) table.set(match[1], defaultsOf(match[2] ?? ""));
  }
  return table;
}

/** commander's option list: an entry per flag, its wrapped description joined back into one line. */
function helpFlags(help: string): FlagTable {
  const entries: [string, string][] = [];
  for (const line of help.split("Options:\n")[1]?.split("\n") ?? []) {
    const start = /^ {2}(?:-\w, )?(--\S+(?: [<[][^>\]]+[>\]])?) {2,}(.*)$/.exec(line);
    const last = entries.at(-1);
    if (start?.[1] !== undefined) entries.push([start[1], start[2] ?? ""]);
    else if (last && /^ {10,}\S/.test(line)) last[1] += ` ${line.trim()}`;
  }
  return new Map(entries.map(([flag, description]) => [flag, defaultsOf(description)]));
}

describe("mcp-tasks serve (CLI)", { timeout: 60_000 }, () => {
  it("documents every option in serve --help", async () => {
    const help = await runCli(["serve", "--help"]);
    expect(help.code).toBe(0);
    for (const option of [
      "--port <n>",
      "--host <address>",
      "--store <spec>",
      "--stdio",
      "--demo",
      "--auth-tokens <file>",
      "--default-ttl <ms>",
      "--max-ttl <ms>",
      "--poll-interval <ms>",
      "--inline-wait-ms <ms>",
      "--max-active-tasks <n>",
      "--max-stored-tasks <n>",
      "--max-queued-inputs <n>",
      "--max-result-bytes <n>",
      "--keep-finished <ms>",
      "--remember-expired <ms>",
      "--tools <module>",
      "--no-tasks",
      "--log-level <level>",
      "--workers <n>",
      "--lease-ms <ms>",
      "--no-web",
      "--admin-token",
      "--redact",
      "--trace-url",
      "--metrics-token",
      "--jwt-issuer",
      "--jwt-audience",
      "--jwt-jwks-url",
      "--jwt-public-key",
      "--jwt-scopes",
      "--jwt-clock-tolerance",
      "--resource-url",
      "--rate-limit <ops/s>",
      "--rate-burst <n>",
      "--failed-lookups <n>",
      "--trust-proxy [hops]",
      "--bind <what>",
      "--audit-arguments",
      "--help",
    ]) {
      expect(help.stdout).toContain(option);
    }
    expect(help.stdout).toContain("PORT"); // the env var behind --port
    expect(help.stdout).toMatch(/sqlite:PATH/);
    // `npm start` = `serve --demo` with these defaults: HTTP on 127.0.0.1, port 3000, a SQLite file.
    const flat = help.stdout.replace(/\s+/g, " "); // commander wraps long descriptions
    expect(flat).toMatch(/--host <address> [^-]*\(default: "127\.0\.0\.1"\)/);
    expect(flat).toMatch(/--port <n> [^-]*\(default: 3000, env: PORT\)/);
    expect(flat).toMatch(/--store <spec> .*?\(default: "sqlite:mcp-tasks\.db"\)/);
    // T-SEC-4 defaults, as docs/limits.md lists them.
    expect(flat).toMatch(/--rate-limit <ops\/s> .*?\(default: 100\)/);
    expect(flat).toMatch(/--rate-burst <n> .*?\(default: 200\)/);
    expect(flat).toMatch(/--failed-lookups <n> .*?\(default: 20\)/);
    expect(flat).toMatch(/--bind <what> .*?\(choices: "owner", "session", default: "owner"\)/);
    // The documented quota defaults (docs/limits.md).
    expect(flat).toMatch(/--max-active-tasks <n> .*?\(default: 100\)/);
    expect(flat).toMatch(/--max-stored-tasks <n> .*?\(default: 10000\)/);
    expect(flat).toMatch(/--max-queued-inputs <n> .*?\(default: 16\)/);
    expect(flat).toMatch(/--max-result-bytes <n> .*?\(default: 4194304\)/);
    expect(flat).toMatch(/--keep-finished <ms> .*?\(default: 0\)/);
    expect(flat).toMatch(/--remember-expired <ms> .*?\(default: 86400000\)/);

    const top = await runCli(["--help"]);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(/\bserve\b/);
  });

  it("lists the same flags, defaults and environment variables in serve --help as the CLI guide", async () => {
    const help = await runCli(["serve", "--help"]);
    expect(help.code).toBe(0);
    const documented = documentedServeFlags(readFileSync(join(REPO_ROOT, "docs", "cli.md"), "utf8"));
    const listed = helpFlags(help.stdout);
    listed.delete("--help");
    expect(documented.size).toBeGreaterThan(30);
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(listed));
  });

  it("takes the port from PORT, logs the URL it listens on as JSON on stderr, serves the demo tools, and stops cleanly on SIGTERM", async () => {
    const port = await freePort();
    const server = CliProcess.spawn(["serve", "--demo", "--store", "memory"], { env: { PORT: String(port) } });
    const url = await server.url();
    expect(url).toBe(`http://127.0.0.1:${port}/mcp`);

    const c = await connect(url);
    const { tools } = await c.client.listTools();
    // The client declares no tasks capability, so it also sees the fallback's task tools (docs/hosts/README.md).
    expect(tools.map((t) => t.name).sort()).toEqual([
      "approve",
      "ask",
      "batch",
      "echo",
      "fail",
      "nap",
      "sample",
      "sleep",
      "steps",
      "task_cancel",
      "task_list",
      "task_result",
      "task_status",
      "throw",
    ]);
    await c.close();

    expect(await server.kill("SIGTERM")).toEqual({ code: 0, signal: null });
  });

  it("lets --port override PORT", async () => {
    const busy = await freePort();
    const server = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0"], { env: { PORT: String(busy) } });
    const url = new URL(await server.url());
    expect(url.hostname).toBe("127.0.0.1");
    expect(Number(url.port)).toBeGreaterThan(0);
    expect(Number(url.port)).not.toBe(busy);
  });

  it("applies --default-ttl, --max-ttl and --poll-interval to the tasks it creates", async () => {
    const server = CliProcess.spawn([
      "serve",
      "--demo",
      "--store",
      "memory",
      "--port",
      "0",
      "--default-ttl",
      "5000",
      "--max-ttl",
      "10000",
      "--poll-interval",
      "250",
    ]);
    const c = await connect(await server.url());
    const plain = await callToolAsTask(c.client, "sleep", { ms: 0 });
    expect(plain.task.ttl).toBe(5_000);
    expect(plain.task.pollInterval).toBe(250);
    const capped = await callToolAsTask(c.client, "sleep", { ms: 0 }, { ttl: 3_600_000 });
    expect(capped.task.ttl).toBe(10_000);
    expect((await listTasks(c.client)).tasks).toHaveLength(2);
  });

  it("enables bearer auth from --auth-tokens FILE: 401 without a token, tasks bound to the token's principal", async () => {
    const file = join(tempDir(), "tokens.json");
    writeFileSync(file, JSON.stringify({ "tok-a": "alice", "tok-b": "bob" }));
    const server = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0", "--auth-tokens", file]);
    const url = await server.url();
    const line = await server.stderr.waitFor((l) => typeof l["url"] === "string", "the listening line");
    expect(line["auth"]).toBe("bearer tokens");

    const initialize = {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
    };
    const anonymous = await rawPost(url, initialize);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Bearer\b/);

    const alice = await connect(url, { token: "tok-a" });
    const created = await callToolAsTask(alice.client, "sleep", { ms: 0 });
    const bob = await connect(url, { token: "tok-b" });
    expect((await listTasks(bob.client)).tasks).toEqual([]);
    expect((await listTasks(alice.client)).tasks.map((t) => t.taskId)).toEqual([created.task.taskId]);
  });

  it("exits non-zero with a clear message for an unreadable or malformed --auth-tokens file", async () => {
    const dir = tempDir();
    const missing = await runCli(["serve", "--demo", "--store", "memory", "--port", "0", "--auth-tokens", join(dir, "absent.json")]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/Cannot read the auth token file/);

    const wrong = join(dir, "wrong.json");
    writeFileSync(wrong, JSON.stringify({ "tok-a": 42 }));
    const malformed = await runCli(["serve", "--demo", "--store", "memory", "--port", "0", "--auth-tokens", wrong]);
    expect(malformed.code).not.toBe(0);
    expect(malformed.stderr).toMatch(/maps every token to a non-empty principal string/);
  });

  it("serves a user's tools module (--tools) as tasks, elicitation and progress included", async () => {
    const server = CliProcess.spawn(["serve", "--tools", "test/support/user-tools.ts", "--store", "memory", "--port", "0"]);
    const c = await connect(await server.url());
    const { tools } = await c.client.listTools();
    // The fallback's task_* tools are listed too: this client declares no tasks (docs/hosts/README.md).
    expect(tools.filter((t) => !t.name.startsWith("task_")).map((t) => [t.name, t.execution?.taskSupport])).toEqual([
      ["render", "optional"],
    ]);
    c.client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { answer: "4K" } }));
    const created = await callToolAsTask(c.client, "render", { scene: "teapot" }, {}, { onprogress: () => {} });
    expect((await taskResult(c.client, created.task.taskId)).content).toEqual([{ type: "text", text: "rendered teapot (4K)" }]);
    expect((await getTask(c.client, created.task.taskId)).status).toBe("completed");
    await c.received.waitFor(
      (r) => r.message.method === "notifications/progress" && r.message.params?.["progress"] === 2,
      "the last progress",
    );
    const messages = c.messagesOf("notifications/progress").map((r) => r.message.params?.["message"]);
    expect(messages).toEqual(["loading", "rendering"]);
  });

  it("exits non-zero with a clear message for a bad store spec", async () => {
    const unsupported = await runCli(["serve", "--demo", "--store", "redis://db/tasks", "--port", "0"]);
    expect(unsupported.code).not.toBe(0);
    expect(unsupported.stderr).toContain('Unsupported store "redis://db/tasks": expected one of memory, sqlite:PATH, PATH.db');

    const noPath = await runCli(["serve", "--demo", "--store", "sqlite:", "--port", "0"]);
    expect(noPath.code).not.toBe(0);
    expect(noPath.stderr).toMatch(/sqlite: needs a file path/);
    // Neither printed anything on stdout, nor started listening.
    expect(unsupported.stdout + noPath.stdout).toBe("");
    expect(unsupported.stderr + noPath.stderr).not.toMatch(/listening on/);
  });

  it("exits 2 (usage, as call and tasks do) with a clear message for bad options", async () => {
    const badPort = await runCli(["serve", "--demo", "--store", "memory", "--port", "http"]);
    expect(badPort.code).toBe(ExitCode.Usage);
    expect(badPort.stderr).toMatch(/--port.*non-negative integer/);

    // A limit says what it takes, whether the value is 0 or no number at all.
    for (const value of ["0", "-1", "x"]) {
      const badLimit = await runCli(["serve", "--demo", "--store", "memory", "--max-running-per-principal", value]);
      expect(badLimit.code, value).toBe(ExitCode.Usage);
      expect(badLimit.stderr, value).toMatch(/--max-running-per-principal.*expected an integer of at least 1/);
    }

    const nothing = await runCli(["serve", "--store", "memory", "--port", "0"]);
    expect(nothing.code).toBe(ExitCode.Usage);
    expect(nothing.stderr).toMatch(/nothing to serve: pass --demo/);
  });

  it("refuses --stdio with any auth flag (--auth-tokens, --jwt-*, --resource-url): exit 2 naming the flags, nothing served", async () => {
    // Complete, valid auth configurations: refused because stdio cannot apply them, not because they are wrong.
    const tokens = join(tempDir(), "tokens.json");
    writeFileSync(tokens, JSON.stringify({ "tok-a": "alice" }));
    const cases: [string[], RegExp][] = [
      [["--auth-tokens", tokens], /^error: --auth-tokens configures HTTP authentication, which --stdio does not have/m],
      [
        ["--jwt-issuer", "https://issuer.test", "--jwt-audience", "mcp", "--jwt-jwks-url", "https://issuer.test/jwks"],
        /--jwt-issuer, --jwt-audience, --jwt-jwks-url configure HTTP authentication, which --stdio does not have/,
      ],
      [["--resource-url", "https://mcp.example.com/mcp"], /--resource-url configures HTTP authentication, which --stdio does not have/],
    ];
    for (const [flags, message] of cases) {
      const run = await runCli(["serve", "--stdio", "--demo", "--store", "memory", ...flags], { timeoutMs: 10_000 });
      expect(run.code).toBe(ExitCode.Usage);
      expect(run.stderr).toMatch(message);
      expect(run.stderr).toMatch(/drop --stdio to serve HTTP with authentication/);
      expect(run.stderr).not.toMatch(/serving MCP over stdio/);
      expect(run.stdout).toBe("");
    }
  });

  it("passes `npm start -- <flags>` through to `serve --demo`", async () => {
    const child = spawn("npm", ["start", "--silent", "--", "--help"], { cwd: REPO_ROOT, env: cliEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    clearTimeout(timer);
    expect(code).toBe(0);
    expect(stdout).toContain("Usage: mcp-tasks serve");
    expect(stdout).toContain("--poll-interval <ms>");
  });
});
