/**
 * The gateway follows its upstream's tasks itself and says so at initialize (2025-11-25:
 * `capabilities.tasks`, T-CAP-1), so an upstream that is itself a task server with the fallback
 * for hosts without tasks (our `serve --stdio --demo`) treats it as a task-capable client: it does
 * not list its `task_*` tools to the gateway, and the gateway's requestors — in both eras, from the
 * CLI's table — never reach the upstream's own tasks, which one connection holds for every
 * principal, through them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERAS } from "../support/cli-eras.js";
import { BIN, killAll, runCli } from "../support/cli-process.js";
import { closeClients, nodeCommand, startGateway, type GatewayProcess } from "./gateway-fixture.js";

const FALLBACK_TOOLS = ["task_status", "task_result", "task_cancel", "task_list"];

let dir: string;
let gateway: GatewayProcess;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-gateway-declaration-"));
  gateway = await startGateway([
    "--no-web",
    "--store",
    `sqlite:${join(dir, "gateway.db")}`,
    "--upstream-stdio",
    nodeCommand(BIN, "serve", "--stdio", "--demo", "--store", "memory", "--log-level", "warn"),
  ]);
}, 90_000);

afterAll(async () => {
  await closeClients();
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(ERAS)("a gateway in front of a task server with a fallback, under $name", (era) => {
  const cli = (args: string[]) =>
    runCli(args, { env: { MCP_TASKS_STATE_DIR: mkdtempSync(join(dir, "state-")), MCP_TASKS_PROTOCOL: era.protocol }, timeoutMs: 30_000 });

  it("lists the upstream's own tools and none of its task tools", { timeout: 40_000 }, async () => {
    const run = await cli(["tools", "list", gateway.url, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const names = (JSON.parse(run.stdout) as { tools: { name: string }[] }).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["echo", "sleep", "steps"]));
    for (const name of FALLBACK_TOOLS) expect(names).not.toContain(name);
  });

  it("refuses a call of an upstream task tool as a tool it does not have", { timeout: 40_000 }, async () => {
    const run = await cli(["call", gateway.url, "task_list", "{}"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('unknown tool "task_list"');
  });
});
