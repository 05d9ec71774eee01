/** `mcp-tasks gateway`'s flags as documented, and its usage errors (exit 2). */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ExitCode } from "../../src/cli/exit-codes.js";
import { killAll, REPO_ROOT, runCli } from "../support/cli-process.js";
import { freePort } from "../support/free-port.js";

afterEach(async () => {
  await killAll();
});

/** The flags (name and argument placeholder) of a docs/cli.md block that starts with `heading`. */
function documentedFlags(guide: string, heading: string): Set<string> {
  const block = guide.split(`\n${heading}`)[1]?.split("\n\n")[0] ?? "";
  const flags = new Set<string>();
  for (const line of block.split("\n")) {
    const match = /^ {2}(--\S+(?: [<[][^>\]]+[>\]])?) {2,}/.exec(line);
    if (match?.[1] !== undefined) flags.add(match[1]);
  }
  return flags;
}

describe("mcp-tasks gateway (CLI)", { timeout: 60_000 }, () => {
  it("documents every flag of gateway --help in the CLI guide (its own block, or serve's)", async () => {
    const help = await runCli(["gateway", "--help"]);
    expect(help.code).toBe(0);
    const shown = [...help.stdout.matchAll(/^ {2}(?:-\w, )?(--[\w-]+(?: [<[][^>\]]+[>\]])?)/gm)]
      .map((m) => m[1] as string)
      .filter((f) => f !== "--help");
    const guide = readFileSync(join(REPO_ROOT, "docs", "cli.md"), "utf8");
    const documented = new Set([...documentedFlags(guide, "mcp-tasks serve [options]"), ...documentedFlags(guide, "mcp-tasks gateway (")]);
    expect(shown.filter((flag) => !documented.has(flag))).toEqual([]);
    expect(shown).toEqual(
      expect.arrayContaining(["--upstream-stdio <command>", "--upstream-url <url>", "--upstream-header <header>", "--config <file>"]),
    );
  });

  it("refuses to start without an upstream, or with both kinds: exit 2", async () => {
    for (const args of [[], ["--upstream-stdio", "x", "--upstream-url", "http://127.0.0.1:1/mcp"]]) {
      const run = await runCli(["gateway", "--store", "memory", ...args]);
      expect(run.code).toBe(ExitCode.Usage);
      expect(run.stderr).toContain("pass exactly one of --upstream-stdio COMMAND and --upstream-url URL");
    }
  });

  it("refuses a malformed config file naming what is wrong: exit 2", async () => {
    const run = await runCli(["gateway", "--store", "memory", "--upstream-stdio", "x", "--config", join(REPO_ROOT, "package.json")]);
    expect(run.code).toBe(ExitCode.Usage);
    expect(run.stderr).toMatch(/gateway config .*package\.json: .*Unrecognized key/);
  });

  const unreachable: Array<[string, string[], RegExp]> = [
    [
      "nothing listens at its URL",
      ["--upstream-url", "http://127.0.0.1:FREE_PORT/mcp"],
      /: connection refused \(nothing listens at 127\.0\.0\.1:\d+; is the server running\?\) \[ECONNREFUSED\]/,
    ],
    ["fetch refuses its port", ["--upstream-url", "http://127.0.0.1:1/mcp"], /\(http:\/\/127\.0\.0\.1:1\/mcp\): fetch failed: bad port/],
    [
      "its host name does not resolve",
      ["--upstream-url", "http://no-such-host.invalid/mcp"],
      /cannot resolve the host name no-such-host\.invalid/,
    ],
    [
      "its command exits at once",
      ["--upstream-stdio", `${JSON.stringify(process.execPath)} -e "process.exit(1)"`],
      /it closed the connection before answering initialize \(it exited: see its own output above\)/,
    ],
    [
      "its command says nothing",
      ["--upstream-timeout", "1500", "--upstream-stdio", `${JSON.stringify(process.execPath)} -e "setInterval(() => {}, 1000)"`],
      /it did not answer initialize within 1500 ms \(--upstream-timeout\)/,
    ],
    [
      "its command does not exist",
      ["--upstream-stdio", "no-such-command-for-mcp-tasks"],
      /its command was not found \(check --upstream-stdio\)/,
    ],
  ];
  for (const [what, args, cause] of unreachable) {
    it(`does not start when the upstream cannot be reached (${what}), saying why: exit 1`, async () => {
      // FREE_PORT: one the OS just handed out and took back, so nothing listens there.
      const port = String(await freePort());
      const run = await runCli(["gateway", "--store", "memory", "--port", "0", ...args.map((arg) => arg.replace("FREE_PORT", port))]);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/mcp-tasks: cannot connect to the upstream server \(/);
      expect(run.stderr).toMatch(cause);
    });
  }
});
