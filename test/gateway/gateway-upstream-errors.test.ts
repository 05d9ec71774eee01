/**
 * An upstream's own JSON-RPC error is its answer, whatever its code: the task fails with it and
 * `tasks/result` replays it, in both eras. -32000 and -32001 are the codes the SDK also uses for a
 * lost connection and a timeout, yet answered by a connected upstream they are neither: the call
 * is not re-sent (even for a tool configured to be re-sent after a crash) and not reported as a
 * crash or a timeout. A result that breaks the tool's own outputSchema is the upstream's failure
 * too (-32603 naming it), not an error of the request (-32602, -32600).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { killAll } from "../support/cli-process.js";
import { callToolAsTask, getTask, rpcError, taskResult } from "../support/conformance.js";
import { pollTask, isTerminal, statelessRpc } from "../support/stateless-client.js";
import { BAD_UPSTREAM, closeClients, eventually, nodeCommand, startGateway, type GatewayProcess } from "./gateway-fixture.js";

let gateway: GatewayProcess;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-gw-errors-"));
  const config = join(dir, "gateway.json");
  writeFileSync(config, JSON.stringify({ tools: { "rpc-error": { recovery: "retry", retries: 2 } } }));
  gateway = await startGateway([
    "--store",
    "memory",
    "--config",
    config,
    "--upstream-timeout",
    "5000",
    "--upstream-stdio",
    nodeCommand(BAD_UPSTREAM),
  ]);
}, 60_000);

afterAll(async () => {
  await closeClients();
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

interface Failure {
  statusMessage: unknown;
  error: { code: number; message: string; data?: unknown };
}

interface Era {
  name: string;
  /** Creates a task of `tool` with `args`; returns how it failed and the error its result replays. */
  fail(tool: string, args?: Record<string, unknown>): Promise<Failure>;
}

const ERAS: Era[] = [
  {
    name: "2025-11-25",
    async fail(tool, args = {}) {
      const { client } = await gateway.connect();
      const created = await callToolAsTask(client, tool, args);
      const failed = await eventually("the task to fail", async () => {
        const task = await getTask(client, created.task.taskId);
        return task.status === "failed" ? task : undefined;
      });
      const error = await rpcError(taskResult(client, created.task.taskId));
      return { statusMessage: failed.statusMessage, error };
    },
  },
  {
    name: "2026-07-28",
    async fail(tool, args = {}) {
      const answer = await statelessRpc(gateway.url, "tools/call", { name: tool, arguments: args });
      // Answered inline when the upstream is quick, or as a task to follow.
      if (answer.body.error) return { statusMessage: answer.body.error.message, error: answer.body.error };
      const taskId = answer.body.result?.["taskId"];
      expect(taskId).toEqual(expect.any(String));
      const done = await pollTask(gateway.url, String(taskId), isTerminal);
      expect(done["status"]).toBe("failed");
      return { statusMessage: done["statusMessage"], error: done["error"] as Failure["error"] };
    },
  },
];

const calls = (): number => (gateway.cli.stderrText.match(/rpc-error called in pid/g) ?? []).length;

describe.each(ERAS)("gateway: an upstream's own JSON-RPC error ($name)", { timeout: 60_000 }, (era) => {
  for (const code of [-32000, -32001, -32042]) {
    it(`${code} fails the task with the upstream's error, replayed as it is, after one call upstream`, async () => {
      const before = calls();
      const [upstream] = gateway.upstreamPids();
      const { statusMessage, error } = await era.fail("rpc-error", { code });
      expect(statusMessage).toBe("upstream says no");
      expect(error).toMatchObject({ code, message: expect.stringMatching(/upstream says no/) });
      expect(calls() - before).toBe(1);
      expect(gateway.upstreamPids()).toEqual([upstream]);
      expect(gateway.cli.stderrText).not.toMatch(/re-sending it once restarted/);
    });
  }

  const breaches: Array<[string, RegExp]> = [
    ["unfit", /answered tools\/call unfit with structured content that does not fit the tool's outputSchema \(.*n.*\)/],
    ["unstructured", /answered tools\/call unstructured with no structured content, although the tool has an outputSchema/],
  ];
  for (const [tool, message] of breaches) {
    it(`a result that breaks the tool's outputSchema (${tool}) fails the task with -32603 naming the upstream`, async () => {
      const { statusMessage, error } = await era.fail(tool);
      expect(statusMessage).toMatch(message);
      expect(statusMessage).toMatch(/^The upstream server \(stdio:/);
      expect(error.code).toBe(-32603);
    });
  }
});
