/**
 * A PostgreSQL server that takes no more connections (`53300 sorry, too many clients already`):
 * a private server with a small max_connections, filled by this test's own connections while a
 * cluster (one front, one worker, their connections through a TCP proxy) has to reconnect. The
 * store is unreachable for that while, not broken: requests are answered with the retryable
 * error, a handler that finishes meanwhile has its outcome stored once connections free up, and
 * events sent meanwhile still reach the other nodes.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OWN_ERROR_CODES } from "../../src/mcp/own-error-codes.js";
import { pgEventBus, type PgEventBus } from "../../src/events/pg-event-bus.js";
import type { TaskEvent } from "../../src/events/task-event.js";
import { Cluster } from "../support/cluster.js";
import { callToolAsTask, getTask, rpcError, taskResult } from "../support/conformance.js";
import { connectHttpClient, type HttpClient } from "../support/http-fixture.js";
import { uniqueName } from "../support/postgres.js";
import { startPrivatePostgres, type PrivatePostgres } from "../support/private-postgres.js";
import { statelessRpc } from "../support/stateless-client.js";
import { TcpProxy } from "../support/tcp-proxy.js";

let server: PrivatePostgres;
let proxy: TcpProxy;
let cluster: Cluster;
let client: HttpClient;

beforeAll(async () => {
  server = await startPrivatePostgres({ max_connections: "30" });
  proxy = await TcpProxy.start(server.url);
  cluster = await Cluster.start({ fronts: 1, workers: 1, pgUrl: proxy.via(server.url) });
  client = await connectHttpClient(cluster.urls[0]!);
}, 90_000);

afterAll(async () => {
  await client?.close().catch(() => {});
  await cluster?.stop();
  await proxy?.stop();
  await server?.stop();
});

/** Connections of this test's own that hold every slot of the server; `free()` closes them. */
interface Filled {
  free(): Promise<void>;
}

async function connectDirect(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: server.url });
  c.on("error", () => {});
  await c.connect();
  return c;
}

/**
 * Takes every connection slot of the server: the cluster's connections are cut (held at the proxy
 * meanwhile, so none of them comes back first), this test opens connections until the server says
 * `53300`, and then lets the cluster through again, to be refused. `others`: connections of the
 * test's own that stay open besides.
 */
async function fillServer(others = 0): Promise<Filled> {
  const held: pg.Client[] = [];
  proxy.pause();
  proxy.cut();
  const admin = await connectDirect();
  held.push(admin);
  // Until the cut backends are gone: only this test's connections are left.
  for (let i = 0; ; i++) {
    const { rows } = await admin.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend'",
    );
    if (rows[0]!.n === 1 + others) break;
    if (i > 200) throw new Error("the cluster's backends did not go away");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  for (;;) {
    try {
      held.push(await connectDirect());
    } catch (error) {
      expect((error as { code?: unknown }).code).toBe("53300");
      break;
    }
  }
  proxy.resume();
  return {
    async free() {
      await Promise.all(held.map((c) => c.end().catch(() => {})));
    },
  };
}

const ERAS = [
  {
    name: "2025-11-25" as const,
    async getTask(taskId: string) {
      const error = await rpcError(getTask(client.client, taskId));
      return { code: error.code, message: error.message, data: error.data };
    },
  },
  {
    name: "2026-07-28" as const,
    async getTask(taskId: string) {
      const { body } = await statelessRpc(cluster.urls[0]!, "tasks/get", { taskId });
      return body.error;
    },
  },
];

describe("PostgreSQL out of connections", { timeout: 40_000 }, () => {
  it("a request while PostgreSQL takes no more connections is answered with the retryable store-unreachable error, in both eras", async () => {
    const { task } = await callToolAsTask(client.client, "sleep", { ms: 10 });
    await taskResult(client.client, task.taskId);
    const filled = await fillServer();
    try {
      for (const era of ERAS) {
        const error = await era.getTask(task.taskId);
        expect(error, era.name).toMatchObject({
          code: OWN_ERROR_CODES.unavailable.codes[era.name],
          data: { reason: "store_unreachable", retryAfterMs: 1000 },
        });
        expect(error?.message, era.name).toMatch(/The task store is unreachable/);
      }
    } finally {
      await filled.free();
    }
  });

  it("a handler that finished while PostgreSQL took no more connections has its outcome stored once connections free up, and ran once", async () => {
    const { task } = await callToolAsTask(client.client, "sleep", { ms: 1500 });
    const worker = await cluster.claimer(task.taskId);
    // Waiting on the front across the outage: its LISTEN connection is refused too meanwhile.
    const result = taskResult(client.client, task.taskId);
    const filled = await fillServer();
    let freedAt: number;
    try {
      const write = await worker.stderr.waitFor(
        (l) =>
          l["taskId"] === task.taskId && (l["msg"] === "task store write failed; retrying" || l["msg"] === "could not store task outcome"),
        "the worker to try to store the outcome",
        10_000,
      );
      expect(write["msg"]).toBe("task store write failed; retrying");
    } finally {
      await filled.free();
      freedAt = performance.now();
    }
    expect((await result).content).toEqual([{ type: "text", text: "slept 1500 ms" }]);
    // Well before the waiter's 30 s re-check of the store.
    expect(performance.now() - freedAt).toBeLessThan(10_000);
    expect(worker.stderr.filter((l) => l["msg"] === "claimed task" && l["taskId"] === task.taskId)).toHaveLength(1);
    expect((await getTask(client.client, task.taskId)).status).toBe("completed");
  });

  it("a task event sent while PostgreSQL took no more connections reaches the other node once connections free up", async () => {
    const channel = uniqueName("full");
    const sender: PgEventBus = pgEventBus({ connectionString: server.url, channel });
    const receiver: PgEventBus = pgEventBus({ connectionString: server.url, channel });
    const heard: TaskEvent[] = [];
    try {
      await Promise.all([sender.ready, receiver.ready]);
      receiver.onTask("t-full", (event) => heard.push(event));
      // The sender's pool has no connection yet: its NOTIFY needs a new one, which is refused.
      const filled = await fillServer(2);
      try {
        sender.publish({ type: "cancel", taskId: "t-full", reason: "test" });
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(heard).toEqual([]);
      } finally {
        await filled.free();
      }
      const deadline = Date.now() + 5_000;
      while (heard.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(heard).toEqual([{ type: "cancel", taskId: "t-full", reason: "test" }]);
    } finally {
      await Promise.all([sender.close(), receiver.close()]);
    }
  });
});
