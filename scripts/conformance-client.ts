/**
 * The CLI as the client of the official conformance suite's client scenarios:
 *
 *   conformance client --scenario <name> --command "node tsx scripts/conformance-client.ts"
 *
 * The suite starts its own server for the scenario, then runs the command with the server's URL
 * appended as the last argument and the scenario's name in MCP_CONFORMANCE_SCENARIO (its context,
 * when it has one, as JSON in MCP_CONFORMANCE_CONTEXT). This script looks the scenario up in
 * {@link SCENARIOS} and runs `mcp-tasks` as a person would for it; the suite judges what reached its
 * server. The exit status is the CLI's. Each run has a state directory of its own (its sessions,
 * journal and era cache) unless MCP_TASKS_STATE_DIR names one.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { shellQuote, TmuxTerminal } from "../test/support/tmux.js";

const ROOT = join(import.meta.dirname, "..");
const BIN = join(ROOT, "bin/mcp-tasks-dev.js");

/** What a handler gets: the scenario's server URL, its context (if any), and a way to run the CLI. */
interface ScenarioRun {
  serverUrl: string;
  scenario: string;
  context: Record<string, unknown>;
  /** The run's state directory (MCP_TASKS_STATE_DIR of every invocation). */
  stateDir: string;
  /** Runs `mcp-tasks <args>`; resolves with its exit code (stdout and stderr pass through to ours). */
  cli(args: string[]): Promise<number>;
}

/** Runs the CLI for one scenario; resolves with the exit status to report to the suite. */
type Handler = (run: ScenarioRun) => Promise<number>;

/** `mcp-tasks <args>` with this process's stdout and stderr (the suite records both). */
function runCli(stateDir: string, args: string[]): Promise<number> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, MCP_TASKS_STATE_DIR: stateDir } });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => resolve(code ?? 128));
  });
}

/**
 * `mcp-tasks <args>` in a real terminal (tmux) where a person presses Enter at every prompt and
 * nothing else: what accepting a form as offered means. Prints the last screen to stdout.
 */
async function cliInTerminal(run: ScenarioRun, args: string[], options: { prompts: number }): Promise<number> {
  const command = [process.execPath, BIN, ...args].map(shellQuote).join(" ");
  const line = `MCP_TASKS_STATE_DIR=${shellQuote(run.stateDir)} ${command}; echo "EXIT=$?"; sleep 600`;
  const terminal = await TmuxTerminal.start(line, { width: 160, height: 50 });
  try {
    // Inquirer marks the prompt waiting for an answer with "?" at the start of its line, and an
    // answered one with "✔": press Enter each time a new unanswered prompt shows, until the CLI exits.
    let answered = 0;
    let screen = "";
    const deadline = Date.now() + 25_000;
    while (Date.now() < deadline) {
      screen = await terminal.screen();
      if (/^EXIT=\d+/m.test(screen)) break;
      const waiting = screen.split("\n").filter((l) => l.startsWith("? ")).length;
      if (waiting > 0 && answered < options.prompts) {
        await terminal.press("Enter");
        answered += 1;
        // The next prompt replaces this one: wait until it is marked answered before looking again.
        await waitUntil(async () => (await terminal.screen()).split("\n").filter((l) => l.startsWith("✔ ")).length >= answered || /^EXIT=/m.test(await terminal.screen()));
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    process.stdout.write(`${screen.trimEnd()}\n`);
    const code = /^EXIT=(\d+)/m.exec(screen)?.[1];
    if (code === undefined) {
      process.stderr.write(`the CLI did not exit in the terminal after ${answered} prompt(s) answered\n`);
      return 1;
    }
    if (answered !== options.prompts) process.stderr.write(`expected ${options.prompts} prompts, answered ${answered}\n`);
    return answered === options.prompts ? Number(code) : 1;
  } finally {
    await terminal.close();
  }
}

async function waitUntil(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Scenario name (as the suite's `list` prints it) → how the CLI plays it. The suite's server
 * decides what passes; each entry says what it expects of the client.
 */
const SCENARIOS: Record<string, Handler> = {
  // The handshake: protocol version and clientInfo in `initialize`. Listing the tools is the
  // smallest command that connects.
  initialize: (run) => run.cli(["tools", "list", run.serverUrl]),
  // The server's add_numbers tool, called with the numbers its check expects to see summed.
  tools_call: (run) => run.cli(["call", run.serverUrl, "add_numbers", JSON.stringify({ a: 5, b: 3 })]),
  // The server closes the call's SSE stream after a priming event (`id:` and `retry: 500`): the
  // client reconnects with GET and Last-Event-ID after the given 500 ms and gets its result there.
  "sse-retry": (run) => run.cli(["call", run.serverUrl, "test_reconnection"]),
  // An elicitation whose five optional fields all have defaults (SEP-1034): a person at the
  // terminal presses Enter at each field, and the accepted content must carry every default.
  "elicitation-sep1034-client-defaults": (run) => cliInTerminal(run, ["call", run.serverUrl, "test_client_elicitation_defaults"], { prompts: 5 }),
};

async function main(): Promise<number> {
  const serverUrl = process.argv.at(-1);
  const scenario = process.env["MCP_CONFORMANCE_SCENARIO"];
  if (serverUrl === undefined || !/^https?:\/\//.test(serverUrl) || scenario === undefined) {
    process.stderr.write("usage: MCP_CONFORMANCE_SCENARIO=<name> conformance-client.ts <server-url>\n");
    return 2;
  }
  const handler = SCENARIOS[scenario];
  if (handler === undefined) {
    process.stderr.write(`conformance-client: no handler for scenario ${scenario} (known: ${Object.keys(SCENARIOS).join(", ")})\n`);
    return 2;
  }
  const context = JSON.parse(process.env["MCP_CONFORMANCE_CONTEXT"] ?? "{}") as Record<string, unknown>;
  const given = process.env["MCP_TASKS_STATE_DIR"];
  const stateDir = given ?? mkdtempSync(join(tmpdir(), "mcp-tasks-conformance-client-"));
  try {
    return await handler({ serverUrl, scenario, context, stateDir, cli: (args) => runCli(stateDir, args) });
  } finally {
    if (given === undefined) rmSync(stateDir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
