/**
 * Bad input from the upstream: one that hangs, answers garbage, exits mid-call or answers a
 * JSON-RPC error. Each time the task fails with a clear statusMessage within a bounded time (the
 * per-call --upstream-timeout), and the gateway keeps serving.
 */
import { afterEach, describe, expect, it } from "vitest";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { killAll } from "../support/cli-process.js";
import { callToolAsTask, getTask, rpcError, taskResult } from "../support/conformance.js";
import { BAD_UPSTREAM, closeClients, eventually, nodeCommand, startGateway } from "./gateway-fixture.js";

afterEach(async () => {
  await closeClients();
  await killAll();
});

async function badGateway() {
  const gateway = await startGateway(["--store", "memory", "--upstream-timeout", "1500", "--upstream-stdio", nodeCommand(BAD_UPSTREAM)]);
  return { gateway, http: await gateway.connect() };
}

async function failedTask(client: Parameters<typeof getTask>[0], tool: string) {
  const created = await callToolAsTask(client, tool, {});
  return eventually(`the ${tool} task to fail`, async () => {
    const task = await getTask(client, created.task.taskId);
    return task.status === "failed" ? task : undefined;
  });
}

const ok = (client: Parameters<typeof getTask>[0]) =>
  client.request({ method: "tools/call", params: { name: "ok", arguments: {} } }, CallToolResultSchema);

// Each test starts real processes (gateway, upstream), seconds each on a shared machine.
describe("gateway in front of a misbehaving upstream", { timeout: 90_000 }, () => {
  it("fails a task whose upstream call hangs once --upstream-timeout passes in silence, and keeps serving", async () => {
    const { http } = await badGateway();
    const task = await failedTask(http.client, "hang");
    expect(task.statusMessage).toMatch(/sent no answer to tools\/call hang for 1500 ms/);
    expect((await ok(http.client)).content).toEqual([expect.objectContaining({ type: "text" })]);
  });

  it("fails a task whose upstream answers garbage within the timeout, and keeps serving", async () => {
    const { http } = await badGateway();
    const task = await failedTask(http.client, "garbage");
    expect(task.statusMessage).toMatch(/sent no answer to tools\/call garbage/);
    expect((await ok(http.client)).content).toHaveLength(1);
  });

  it("fails a task whose upstream exits mid-call, restarts the upstream and serves the next call", async () => {
    const { gateway, http } = await badGateway();
    const [before] = gateway.upstreamPids();
    const task = await failedTask(http.client, "exit");
    expect(task.statusMessage).toMatch(/closed the connection during tools\/call exit \(it exited or crashed\)/);
    const after = await eventually("a call after the restart", () => ok(http.client));
    expect(after.content).not.toEqual([{ type: "text", text: `pid ${before}` }]);
  });

  it("fails a task with the upstream's JSON-RPC error, replayed by tasks/result", async () => {
    const { http } = await badGateway();
    const task = await failedTask(http.client, "rpc-error");
    expect(task.statusMessage).toBe("upstream says no");
    const error = await rpcError(taskResult(http.client, task.taskId));
    expect(error.code).toBe(-32042);
    expect(error.data).toEqual({ why: "test" });
  });
});
