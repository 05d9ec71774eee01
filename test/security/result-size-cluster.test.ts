/**
 * The result-size quota in a cluster (PostgreSQL store and LISTEN/NOTIFY bus): a front node with
 * no workers of its own, and a worker node that runs the handlers. Results travel through the
 * store, never through NOTIFY (status events carry no result), so a result far above NOTIFY's
 * 8 kB payload cap still wakes the front's tasks/result; the limit is the one of the node that
 * runs the handler.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { pgEventBus, type PgEventBus } from "../../src/events/pg-event-bus.js";
import { createTaskServer, type TaskServer } from "../../src/mcp/task-server.js";
import { postgresStore } from "../../src/store/postgres/postgres-store.js";
import { callToolAsTask, expectRpcError, getTask, taskResult } from "../support/conformance.js";
import { pgQuery, TEST_PG_URL, uniqueName } from "../support/postgres.js";

const schema = uniqueName("quota_cluster");
const WORKER_LIMIT = 64 * 1024;
let front: TaskServer;
let worker: TaskServer;
let client: Client;

/** One node of the cluster, with the `big` tool (the front needs it to accept calls). */
function node(name: string, bus: PgEventBus, options: { concurrency: number; maxResultBytes?: number }): TaskServer {
  const app = createTaskServer({
    name,
    version: "0.0.0",
    store: postgresStore(TEST_PG_URL, { schema }),
    bus,
    cluster: { workerId: name, concurrency: options.concurrency },
    ...(options.maxResultBytes !== undefined && { maxResultBytes: options.maxResultBytes }),
  });
  app.tool("big", { input: z.object({ chars: z.number() }), taskSupport: "optional" }, async ({ chars }) => ({
    content: [{ type: "text", text: "x".repeat(chars) }],
  }));
  return app;
}

beforeAll(async () => {
  const buses = [
    pgEventBus({ connectionString: TEST_PG_URL, channel: schema }),
    pgEventBus({ connectionString: TEST_PG_URL, channel: schema }),
  ];
  front = node("front", buses[0]!, { concurrency: 0 });
  worker = node("worker", buses[1]!, { concurrency: 2, maxResultBytes: WORKER_LIMIT });
  await front.start();
  await worker.start();
  // Each node hears the other only once LISTEN is up; a NOTIFY sent earlier would be missed.
  await Promise.all(buses.map((bus) => bus.ready));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await front.connect(serverSide);
  client = new Client({ name: "quota-cluster", version: "0.0.0" });
  await client.connect(clientSide);
});

afterAll(async () => {
  await client?.close();
  await front?.close();
  await worker?.close();
  await pgQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
});

describe("T-TTL-7: result size in a cluster", () => {
  it("T-RES-3: a result far above NOTIFY's 8 kB cap, within the limit, completes on the worker and wakes the front's tasks/result", async () => {
    const { task } = await callToolAsTask(client, "big", { chars: 20_000 });
    const result = await taskResult(client, task.taskId);
    expect(result.content).toEqual([{ type: "text", text: "x".repeat(20_000) }]);
  });

  it("T-TTL-7: the worker's limit applies where the handler runs: over it the task fails and the front answers -32603", async () => {
    const { task } = await callToolAsTask(client, "big", { chars: 100_000 });
    const error = await expectRpcError(taskResult(client, task.taskId), -32603, `Result exceeds ${WORKER_LIMIT} bytes`);
    expect(error.data).toMatchObject({ limit: WORKER_LIMIT, name: "result_bytes" });
    expect((await getTask(client, task.taskId)).statusMessage).toBe(`Result exceeds ${WORKER_LIMIT} bytes`);
  });
});
