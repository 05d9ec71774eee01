/**
 * Our CLI through `mcp-tasks gateway` under 2025-11-25 (the session era), in front of the real
 * `@modelcontextprotocol/server-everything` over stdio, which implements no tasks: a slow upstream
 * tool called as a task (T-NEW) is followed to the upstream's result (T-RES), the upstream's
 * elicitation reaches the CLI as the task's question on the tasks/result stream and its answer
 * goes back upstream (T-INPUT), and a detached task's result is fetched by a later process.
 * (gateway-2026.test.ts does the same under 2026-07-28.)
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli-process.js";
import { EVERYTHING, nodeCommand, startGateway, type GatewayProcess } from "./gateway-fixture.js";

const LONG = "trigger-long-running-operation";
const ELICIT = "trigger-elicitation-request";

let gateway: GatewayProcess;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-cli-2025-"));
  gateway = await startGateway(["--store", `sqlite:${join(dir, "gateway.db")}`, "--upstream-stdio", nodeCommand(EVERYTHING, "stdio")]);
}, 60_000);

afterAll(async () => {
  for (const pid of gateway?.upstreamPids() ?? []) process.kill(pid, "SIGKILL");
  await gateway?.cli.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

/** `mcp-tasks call|tasks … --protocol 2025-11-25` against the gateway, with a state directory of its own. */
function cli(args: string[]) {
  return runCli([...args, "--protocol", "2025-11-25"], { env: { MCP_TASKS_STATE_DIR: join(dir, "cli-state") }, timeoutMs: 60_000 });
}

const lastJson = (stdout: string): Record<string, unknown> =>
  JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;

describe("gateway under 2025-11-25: mcp-tasks call --task", { timeout: 90_000 }, () => {
  it("follows a slow upstream tool's task to the upstream's result, and the journal records the era", async () => {
    const run = await cli(["call", gateway.url, LONG, '{"duration":2,"steps":2}', "--task", "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(lastJson(run.stdout)).toMatchObject({
      status: "completed",
      result: { content: [{ type: "text", text: "Long running operation completed. Duration: 2 seconds, Steps: 2." }] },
    });
    const journal = readFileSync(join(dir, "cli-state", "journal.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(journal.find((e) => e["op"] === "created" && e["name"] === LONG)).toMatchObject({ protocol: "2025-11-25", target: gateway.url });
  });

  it("answers the upstream's elicitation with --answer, delivered on the tasks/result stream", async () => {
    const run = await cli(["call", gateway.url, ELICIT, "{}", "--task", "--answer", '{"name":"Grace Hopper"}', "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const out = lastJson(run.stdout);
    expect(out).toMatchObject({ status: "completed" });
    expect(JSON.stringify(out["result"])).toContain("- Name: Grace Hopper");
  });

  it("--detach, then tasks result in another process: the upstream's result", async () => {
    const detached = await cli(["call", gateway.url, LONG, '{"duration":2,"steps":2}', "--task", "--detach"]);
    expect(detached.code, detached.stderr).toBe(0);
    const id = detached.stdout.trim();
    const result = await cli(["tasks", "result", gateway.url, id, "--json"]);
    expect(result.code, result.stderr).toBe(0);
    expect(lastJson(result.stdout)).toMatchObject({
      status: "completed",
      result: { content: [{ type: "text", text: "Long running operation completed. Duration: 2 seconds, Steps: 2." }] },
    });
    const listed = await cli(["tasks", "list", gateway.url]);
    expect(listed.stdout).toContain(id);
  });
});
