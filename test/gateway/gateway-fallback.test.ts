/**
 * Issue #15's fallback through the gateway: a plain SDK client that declares no task support
 * calls a slow tool of the real server-everything; past --background-after it gets an ordinary
 * CallToolResult naming the task, and `task_result` then gives the upstream's own result.
 */
import { afterEach, describe, expect, it } from "vitest";
import { killAll } from "../support/cli-process.js";
import { closeClients, EVERYTHING, nodeCommand, startGateway } from "./gateway-fixture.js";

afterEach(async () => {
  await closeClients();
  await killAll();
});

describe("gateway fallback for a client without tasks", { timeout: 90_000 }, () => {
  it("a slow upstream call answers in the background with its task id, and task_result gives the upstream's result", async () => {
    const gateway = await startGateway([
      "--store",
      "memory",
      "--background-after",
      "500",
      "--upstream-stdio",
      nodeCommand(EVERYTHING, "stdio"),
    ]);
    const { client } = await gateway.connect({ capabilities: {} });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["task_status", "task_result", "task_cancel", "task_list"]));

    const background = await client.callTool({ name: "trigger-long-running-operation", arguments: { duration: 3, steps: 3 } });
    const summary = background.structuredContent as { taskId?: string; status?: string; pollWith?: string };
    expect(summary).toMatchObject({ status: "working", pollWith: "task_result" });
    expect(typeof summary.taskId).toBe("string");
    expect(JSON.stringify(background.content)).toContain(summary.taskId);

    const result = await client.callTool({ name: "task_result", arguments: { taskId: summary.taskId } });
    expect(result.content).toEqual([{ type: "text", text: "Long running operation completed. Duration: 3 seconds, Steps: 3." }]);
  });
});
