/**
 * A task past its ttl (T-ERR-7) as the CLI reports it: real CLI processes (no terminal) against
 * our server over real HTTP. The receiver answers -32602 "Task has expired"; the CLI says the task
 * expired, with its ttl when it saw it, instead of printing a lookup failure.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { killAll, runCli } from "../support/cli-process.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { TASK_ID_PATTERN } from "../support/task-id-pattern.js";

let state: string;
let server: HttpServerFixture;
beforeEach(async () => {
  state = mkdtempSync(join(tmpdir(), "mcp-tasks-expiry-"));
  server = await startHttpServer({ app: { pollIntervalMs: 50 } });
});
afterEach(async () => {
  await killAll();
  await server.close();
  rmSync(state, { recursive: true, force: true });
});

const cli = (args: string[]) => runCli(args, { env: { MCP_TASKS_STATE_DIR: state }, timeoutMs: 30_000 });
const lastJson = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1) ?? "null") as Record<string, unknown>;

describe("an expired task", { timeout: 60_000 }, () => {
  it("T-ERR-7: a call whose task outlives its ttl says it expired, with the ttl (exit 1)", async () => {
    const run = await cli(["call", server.url.href, "sleep", '{"ms":4000}', "--task", "--ttl", "1000"]);
    expect(run.stderr).toMatch(new RegExp(`the task ${TASK_ID_PATTERN} expired \\(its ttl of 1000 ms ran out\\)`));
    expect(run.stderr).not.toContain("error -32602");
    expect(run.code).toBe(1);
  });

  it("T-ERR-7: --json reports status expired with the ttl and the server's error as sent", async () => {
    const run = await cli(["call", server.url.href, "sleep", '{"ms":4000}', "--task", "--ttl", "1000", "--json"]);
    expect(lastJson(run.stdout)).toMatchObject({
      taskId: expect.any(String),
      status: "expired",
      ttl: 1000,
      error: { code: -32602, message: expect.stringMatching(/expired/) },
    });
    expect(run.code).toBe(1);
  });

  it('T-ERR-7: `tasks get` on a task past its ttl (swept: "not found") says it expired, with the ttl the journal kept', async () => {
    const created = await cli(["call", server.url.href, "sleep", '{"ms":4000}', "--task", "--ttl", "1000", "--detach"]);
    const id = created.stdout.trim();
    await new Promise((resolve) => setTimeout(resolve, 1300));
    const run = await cli(["tasks", "get", server.url.href, id]);
    expect(run.stderr.trim()).toBe(`mcp-tasks: the task ${id} expired (its ttl of 1000 ms ran out)`);
    expect(run.code).toBe(1);
  });
});
