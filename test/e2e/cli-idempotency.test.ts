/** `mcp-tasks call --idempotency-key` (SEP-3182) in both eras: a re-sent call names the same task. */
import { afterEach, describe, expect, it } from "vitest";
import { CliProcess, killAll, runCli } from "../support/cli-process.js";
import { WHOLE_TASK_ID } from "../support/task-id-pattern.js";

afterEach(killAll);

describe.each(["2025-11-25", "2026-07-28"])("mcp-tasks call --idempotency-key (%s)", (protocol) => {
  it("the same call sent twice with one key: the same task id, one task", async () => {
    const server = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0", "--no-web"]);
    const url = await server.url();
    const env = { MCP_TASKS_PROTOCOL: protocol };
    const send = (): Promise<{ stdout: string; code: number | null }> =>
      runCli(["call", url, "sleep", '{"ms":60000}', "--detach", "--idempotency-key", "deploy-42"], { env });
    const first = await send();
    const second = await send();
    expect(first.code).toBe(0);
    expect(first.stdout.trim()).toMatch(WHOLE_TASK_ID);
    expect(second.stdout.trim()).toBe(first.stdout.trim());
  }, 60_000);
});
