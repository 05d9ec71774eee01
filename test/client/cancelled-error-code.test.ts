/**
 * A cancelled task's outcome keeps the JSON-RPC error the receiver sent for its tasks/result
 * (`--json` reports the code the server sent). The receiver here is the
 * SDK's own low-level Server with hand-installed task handlers that use a code of their own.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { TaskClient } from "../../src/client/task-client.js";
import { TaskCancelledError } from "../../src/mcp/requestor/requestor-errors.js";
import { looseRequest } from "../../src/mcp/request-schemas.js";

const TASK = {
  taskId: "t-1",
  status: "cancelled",
  statusMessage: "Stopped by the operator",
  createdAt: new Date(0).toISOString(),
  lastUpdatedAt: new Date(0).toISOString(),
  ttl: null,
};

let closeAll: (() => Promise<void>) | null = null;
afterEach(async () => {
  await closeAll?.();
  closeAll = null;
});

async function clientOf(resultError: McpError): Promise<TaskClient> {
  const server = new Server(
    { name: "other-receiver", version: "1.0.0" },
    { capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } },
  );
  server.setRequestHandler(looseRequest("tasks/get"), async () => TASK);
  server.setRequestHandler(looseRequest("tasks/result"), async () => {
    throw resultError;
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: "test", version: "1.0.0" });
  const tasks = new TaskClient(client);
  await client.connect(b);
  closeAll = async () => {
    await tasks.close();
    await server.close();
  };
  return tasks;
}

describe("a cancelled task's error as the receiver sent it", () => {
  it("keeps the receiver's own code and data for a cancelled task, with the statusMessage in the message", async () => {
    const tasks = await clientOf(new McpError(-32099, "cancelled by policy", { policy: "night" }));
    const outcome = await (await tasks.resume("t-1")).outcome();
    expect(outcome.status).toBe("cancelled");
    const error = (outcome as { error: TaskCancelledError }).error;
    expect(error).toBeInstanceOf(TaskCancelledError);
    expect(error.code).toBe(-32099);
    expect(error.data).toEqual({ policy: "night" });
    expect(error.message).toBe("Task was cancelled: Stopped by the operator");
  });

  it("keeps -32800 when that is what the receiver sent", async () => {
    const tasks = await clientOf(new McpError(-32800, "Task was cancelled"));
    const outcome = await (await tasks.resume("t-1")).outcome();
    expect(outcome).toMatchObject({ status: "cancelled", error: { code: -32800 } });
  });
});
