/**
 * Several `mcp-tasks` processes at once, sharing one state directory (the user's, by default),
 * as people run them: calls in two terminals, a script firing four in parallel, a call after one
 * that was killed. Each process must get its own answers, and the journal must keep every entry.
 * Real processes over real HTTP, against our server binding tasks to the owner and to the session.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CliProcess, killAll, runCli } from "../support/cli-process.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";

let state: string;
beforeEach(() => {
  state = mkdtempSync(join(tmpdir(), "mcp-tasks-state-"));
});
afterEach(async () => {
  await killAll();
  rmSync(state, { recursive: true, force: true });
});

const env = () => ({ MCP_TASKS_STATE_DIR: state });
const cli = (args: string[]) => runCli(args, { env: env(), timeoutMs: 45_000 });
/** The last line of a `--json` run, parsed; {} when it printed nothing (it hung and was killed). */
const lastJson = (stdout: string) =>
  JSON.parse(stdout.trim().split("\n").at(-1) || "{}") as { taskId?: string; result?: { content?: { text?: string }[] } };
const textOf = (stdout: string) => lastJson(stdout).result?.content?.[0]?.text;
const journal = () =>
  readFileSync(join(state, "journal.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { op: string; taskId: string });

describe("CLI processes sharing one state directory, against our server", { timeout: 90_000 }, () => {
  let server: HttpServerFixture;
  beforeEach(async () => {
    server = await startHttpServer({ app: { pollIntervalMs: 50 } });
  });
  afterEach(async () => {
    await server.close();
  });

  it("four concurrent calls each print their own result, and the journal keeps all their entries", async () => {
    // A state directory that has been used before, as a user's has.
    expect((await cli(["call", server.url.href, "sleep", '{"ms":10}', "--task"])).code).toBe(0);
    const durations = [2400, 1800, 1200, 600];
    const runs = await Promise.all(
      durations.map((ms) => cli(["call", server.url.href, "sleep", JSON.stringify({ ms }), "--task", "--json"])),
    );
    expect(runs.map((run) => textOf(run.stdout))).toEqual(durations.map((ms) => `slept ${ms} ms`));
    expect(runs.map((run) => run.code)).toEqual([0, 0, 0, 0]);
    const ids = runs.map((run) => lastJson(run.stdout).taskId);
    expect(new Set(ids).size).toBe(4);
    const entries = journal();
    for (const id of ids) {
      const ops = entries.filter((e) => e.taskId === id).map((e) => e.op);
      expect(ops).toContain("created");
      expect(ops).toContain("result");
    }
  });

  it("a call after a call killed with SIGKILL prints its own result", async () => {
    expect((await cli(["call", server.url.href, "sleep", '{"ms":10}', "--task"])).code).toBe(0);
    const known = new Set(journal().map((e) => e.taskId));
    const killed = CliProcess.spawn(["call", server.url.href, "sleep", '{"ms":2500}', "--task", "--json"], { env: env() });
    // Killed once its task exists and it is waiting for the result.
    await waitFor(() => journal().some((e) => e.op === "created" && !known.has(e.taskId)));
    await new Promise((resolve) => setTimeout(resolve, 300));
    await killed.kill("SIGKILL");
    const after = await cli(["call", server.url.href, "sleep", '{"ms":4000}', "--task", "--json"]);
    expect(textOf(after.stdout)).toBe("slept 4000 ms");
    expect(after.code).toBe(0);
  });
});

describe(
  "CLI processes sharing one state directory, against a receiver that binds tasks to the session (ours, --bind session)",
  { timeout: 90_000 },
  () => {
    let bound: HttpServerFixture;
    beforeEach(async () => {
      bound = await startHttpServer({ app: { pollIntervalMs: 50, bind: "session" } });
    });
    afterEach(async () => {
      await bound.close();
    });

    it("calls that wait and calls that detach, all at once: each prints its own; tasks result in later processes prints each detached task's own result", async () => {
      expect((await cli(["call", bound.url.href, "sleep", '{"ms":10}', "--task"])).code).toBe(0);
      const waited = [4000, 3000];
      const detachedMs = [900, 300];
      const [calls, detached] = await Promise.all([
        Promise.all(waited.map((ms) => cli(["call", bound.url.href, "sleep", JSON.stringify({ ms }), "--task", "--json"]))),
        Promise.all(detachedMs.map((ms) => cli(["call", bound.url.href, "sleep", JSON.stringify({ ms }), "--detach"]))),
      ]);
      expect(calls.map((run) => textOf(run.stdout))).toEqual(waited.map((ms) => `slept ${ms} ms`));
      const ids = detached.map((run) => run.stdout.trim());
      expect(new Set(ids).size).toBe(2);
      const results = await Promise.all(ids.map((id) => cli(["tasks", "result", bound.url.href, id])));
      expect(results.map((run) => run.stdout)).toEqual(detachedMs.map((ms) => `slept ${ms} ms\n`));
      expect(results.map((run) => run.code)).toEqual([0, 0]);
    });
  },
);

async function waitFor(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the condition");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
