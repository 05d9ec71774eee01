/**
 * Usage errors of `mcp-tasks` exit 2 everywhere, its usage or the error on stderr: the command run
 * alone, a command group without its subcommand, an unknown command, an unknown option of
 * `worker`. Help asked for still exits 0. Real CLI processes.
 */
import { describe, expect, it } from "vitest";
import { runCli } from "../support/cli-process.js";

describe("mcp-tasks usage errors", { timeout: 30_000 }, () => {
  it("mcp-tasks with no arguments prints its usage on stderr and exits 2", async () => {
    const run = await runCli([]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("Usage: mcp-tasks [options] [command]");
  });

  it.each([["tasks"], ["tools"], ["auth"]])("mcp-tasks %s without a subcommand prints its usage and exits 2", async (group) => {
    const run = await runCli([group]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`Usage: mcp-tasks ${group} [options] [command]`);
  });

  it("an unknown command exits 2", async () => {
    const run = await runCli(["serv"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("unknown command 'serv'");
  });

  it("an unknown option of worker exits 2", async () => {
    const run = await runCli(["worker", "--store", "postgres://127.0.0.1/none", "--bogus"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("unknown option '--bogus'");
  });

  it("help asked for exits 0", async () => {
    const run = await runCli(["help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Usage: mcp-tasks [options] [command]");
  });
});
