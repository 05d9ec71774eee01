/**
 * The mcp-tasks CLI as the client of the official MCP conformance suite's client scenarios:
 *
 *   conformance client --command "/usr/bin/node node_modules/tsx/dist/cli.mjs scripts/conformance-client.ts" --scenario <name>
 *
 * The suite starts a server for the scenario, runs this command with the server's URL appended
 * as the last argument, and sets MCP_CONFORMANCE_SCENARIO (and, for some scenarios,
 * MCP_CONFORMANCE_CONTEXT, a JSON object with scenario data such as pre-registered client
 * credentials). This script maps the scenario to real `mcp-tasks` invocations (bin/mcp-tasks-dev.js,
 * one process each; in a tmux terminal where a person would answer prompts) and exits with the
 * CLI's exit code. It is one table, SCENARIOS, shared by every client scenario: add an entry for a
 * new one.
 *
 * State: every run uses a fresh state directory (MCP_TASKS_STATE_DIR) unless one is given, so a
 * scenario starts without stored sessions, eras or OAuth credentials; invocations within one run
 * share it (the step a person would take next sees what the first stored).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { shellQuote, TmuxTerminal } from "../test/support/tmux.js";

const ROOT = join(import.meta.dirname, "..");
const CLI = join(ROOT, "bin/mcp-tasks-dev.js");

/** What a handler gets: the scenario's server URL, its context (if any), and a way to run the CLI. */
interface ScenarioRun {
  serverUrl: string;
  scenario: string;
  context: Record<string, unknown>;
  /** The run's state directory (MCP_TASKS_STATE_DIR of every invocation): room for files a handler needs. */
  stateDir: string;
  /** Runs `mcp-tasks <args>`; resolves with its exit code (stdout and stderr pass through to ours). */
  cli(args: string[], options?: CliOptions): Promise<number>;
}

interface CliOptions {
  /** Extra environment for this invocation. */
  env?: Record<string, string>;
  /**
   * Act as the person's browser: the CLI runs with --no-browser and prints the authorization URL;
   * this opens it (fetch, following redirects: the authorization server redirects to the CLI's
   * loopback callback with the code). Off: nothing is opened and a flow waits until it times out.
   */
  browser?: boolean;
}

type Handler = (run: ScenarioRun) => Promise<number>;

/** The CIMD client id the suite's auth/basic-cimd scenario expects (its published constant). */
const CIMD_CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json";

/**
 * What a well-behaved OAuth client does in the auth scenarios (the suite's reference client
 * connects, lists the tools and calls `test-tool`): `mcp-tasks call` does exactly that — it lists
 * the tools (to name a misspelt one) before calling. A 401 starts the authorization code flow,
 * a 403 insufficient_scope asks for more scopes (step-up).
 */
const authCall: Handler = (run) =>
  run.cli(["call", run.serverUrl, "test-tool", "{}", "--client-metadata-url", CIMD_CLIENT_METADATA_URL], { browser: true });

/** Pre-registration: the client id and secret come from the scenario's context, not from DCR. */
const preRegisteredCall: Handler = (run) => {
  const { client_id: id, client_secret: secret } = run.context;
  if (typeof id !== "string" || typeof secret !== "string")
    throw new Error(`${run.scenario}: MCP_CONFORMANCE_CONTEXT lacks client_id/client_secret`);
  return run.cli(["call", run.serverUrl, "test-tool", "{}", "--client-id", id], {
    browser: true,
    env: { MCP_TASKS_CLIENT_SECRET: secret },
  });
};

/** The context's string fields, or a clear refusal when the suite did not send them. */
function contextStrings(run: ScenarioRun, ...names: string[]): string[] {
  return names.map((name) => {
    const value = run.context[name];
    if (typeof value !== "string") throw new Error(`${run.scenario}: MCP_CONFORMANCE_CONTEXT lacks ${name}`);
    return value;
  });
}

/** A machine client (client credentials grant, SEP-1046) authenticating with its secret. */
const clientCredentialsSecret: Handler = (run) => {
  const [id, secret] = contextStrings(run, "client_id", "client_secret");
  return run.cli(["call", run.serverUrl, "test-tool", "{}", "--client-credentials", "--client-id", id!], {
    env: { MCP_TASKS_CLIENT_SECRET: secret! },
  });
};

/** A machine client authenticating with a JWT signed by its private key (private_key_jwt, RFC 7523). */
const clientCredentialsJwt: Handler = (run) => {
  const [id, pem] = contextStrings(run, "client_id", "private_key_pem");
  const keyFile = join(run.stateDir, "client-key.pem");
  writeFileSync(keyFile, pem!, { mode: 0o600 });
  const alg = typeof run.context["signing_algorithm"] === "string" ? run.context["signing_algorithm"] : "ES256";
  return run.cli([
    "call",
    run.serverUrl,
    "test-tool",
    "{}",
    "--client-credentials",
    "--client-id",
    id!,
    "--client-private-key",
    keyFile,
    "--client-signing-alg",
    alg,
  ]);
};

/**
 * `mcp-tasks <args>` in a real terminal (tmux) where a person presses Enter at every prompt and
 * nothing else: what accepting a form as offered means. Prints the last screen to stdout.
 */
async function cliInTerminal(run: ScenarioRun, args: string[], options: { prompts: number }): Promise<number> {
  const command = [process.execPath, CLI, ...args].map(shellQuote).join(" ");
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
        await waitUntil(
          async () =>
            (await terminal.screen()).split("\n").filter((l) => l.startsWith("✔ ")).length >= answered ||
            /^EXIT=/m.test(await terminal.screen()),
        );
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
 * Scenario name (as the suite's `list` prints it) → how the CLI plays it; the suite's server
 * decides what passes. The first four are the non-auth client scenarios; the auth/* entries are 0.1.16's 2025-11-25 auth
 * scenarios (all 14), its two 2025-03-26 back-compat ones, its three draft ones and
 * the two client credentials "extension" ones.
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
  "elicitation-sep1034-client-defaults": (run) =>
    cliInTerminal(run, ["call", run.serverUrl, "test_client_elicitation_defaults"], { prompts: 5 }),
  "auth/metadata-default": authCall,
  "auth/metadata-var1": authCall,
  "auth/metadata-var2": authCall,
  "auth/metadata-var3": authCall,
  "auth/basic-cimd": authCall,
  "auth/scope-from-www-authenticate": authCall,
  "auth/scope-from-scopes-supported": authCall,
  "auth/scope-omitted-when-undefined": authCall,
  "auth/scope-step-up": authCall,
  "auth/scope-retry-limit": authCall,
  "auth/token-endpoint-auth-basic": authCall,
  "auth/token-endpoint-auth-post": authCall,
  "auth/token-endpoint-auth-none": authCall,
  "auth/pre-registration": preRegisteredCall,
  "auth/2025-03-26-oauth-metadata-backcompat": authCall,
  "auth/2025-03-26-oauth-endpoint-fallback": authCall,
  "auth/resource-mismatch": authCall,
  "auth/offline-access-scope": authCall,
  "auth/offline-access-not-supported": authCall,
  "auth/client-credentials-basic": clientCredentialsSecret,
  "auth/client-credentials-jwt": clientCredentialsJwt,
};

/** Runs the CLI once; with `browser`, opens the authorization URLs it prints. */
function runCli(stateDir: string, args: string[], options: CliOptions = {}): Promise<number> {
  const child = spawn(process.execPath, [CLI, ...args, ...(options.browser ? ["--no-browser"] : [])], {
    cwd: ROOT,
    env: { ...process.env, MCP_TASKS_STATE_DIR: stateDir, ...options.env },
    stdio: ["ignore", "inherit", "pipe"],
  });
  const opened: Array<Promise<void>> = [];
  createInterface({ input: child.stderr! }).on("line", (line) => {
    process.stderr.write(`${line}\n`);
    const url = options.browser ? /^\s*(https?:\/\/\S+)\s*$/.exec(line)?.[1] : undefined;
    // The CLI prints the authorization URL alone on its line (output for a person to copy).
    if (url !== undefined) opened.push(openLikeABrowser(url));
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code, signal) => {
      const status = code ?? 128;
      // Saved by the suite with the client's stderr: a test reads which exit code the CLI chose.
      process.stderr.write(`[conformance-client] mcp-tasks ${args[0] ?? ""} exited ${code ?? `on ${signal}`}\n`);
      void Promise.allSettled(opened).then(() => resolve(status));
    });
  });
}

/** What a browser does with the authorization URL when the server authorizes at once: follows its redirects. */
async function openLikeABrowser(url: string): Promise<void> {
  try {
    const response = await fetch(url, { redirect: "follow" });
    process.stderr.write(`[conformance-client] opened ${new URL(url).origin}…: HTTP ${response.status} at ${response.url}\n`);
    await response.body?.cancel();
  } catch (error) {
    process.stderr.write(
      `[conformance-client] opening the authorization URL failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
  }
}

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
    return await handler({ serverUrl, scenario, context, stateDir, cli: (args, options) => runCli(stateDir, args, options) });
  } finally {
    if (given === undefined) rmSync(stateDir, { recursive: true, force: true });
  }
}

process.exitCode = await main();
