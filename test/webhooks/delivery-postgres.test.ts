/**
 * Two servers sharing one PostgreSQL store, each sending the outbox (claims are leased, FOR UPDATE
 * SKIP LOCKED): every event is delivered under one webhook-id, verified with the
 * reference implementation; a receiver down for a while gets everything once it is back.
 */
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterAll, describe, expect, it } from "vitest";
import { postgresStore } from "../../src/store/postgres/postgres-store.js";
import { callToolAsTask } from "../support/conformance.js";
import { inMemoryFixture, type Fixture } from "../support/in-memory-fixture.js";
import { httpReceiver } from "../support/http-receiver.js";
import { pgQuery, TEST_PG_URL, uniqueName } from "../support/postgres.js";

const secret = `whsec_${randomBytes(24).toString("base64")}`;
const schema = uniqueName("mcp_tasks_webhooks");

afterAll(async () => {
  await pgQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
});

describe("webhooks on a shared PostgreSQL store", { timeout: 60_000 }, () => {
  it("two senders deliver every event (one webhook-id per task, retries keep it), including those queued while the receiver was down", async () => {
    const target = await httpReceiver();
    let down = true;
    target.answer((_request, response) => response.writeHead(down ? 503 : 200).end());
    const webhooks = {
      endpoints: [{ id: "ci", url: target.url, secret, allowPrivate: ["127.0.0.1"] }],
      firstRetryDelayMs: 50,
      maxRetryDelayMs: 200,
      pollIntervalMs: 50,
    };
    const servers: Fixture[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        servers.push(await inMemoryFixture({ store: postgresStore(TEST_PG_URL, { schema, poolSize: 4 }), webhooks }));
      }
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) {
        const created = await callToolAsTask(servers[i % 2]!.client, "sleep", { ms: 1 }, { ttl: 60_000 });
        ids.push(created.task.taskId);
      }
      await target.waitFor(5);
      down = false;
      const outbox = servers[0]!.app.engine.outbox!;
      const deadline = Date.now() + 30_000;
      while ((await outbox.outboxStats()).pending > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      const events = new Map<string, string>();
      for (const request of target.received) {
        const event = new Webhook(secret).verify(request.body, {
          "webhook-id": String(request.headers["webhook-id"]),
          "webhook-timestamp": String(request.headers["webhook-timestamp"]),
          "webhook-signature": String(request.headers["webhook-signature"]),
        }) as { data: { taskId: string } };
        events.set(String(request.headers["webhook-id"]), event.data.taskId);
      }
      expect([...new Set(events.values())].sort()).toEqual([...ids].sort());
      expect(events.size).toBe(20);
      const rows = await outbox.deliveries({ state: "delivered" }, 100);
      expect(rows).toHaveLength(20);
    } finally {
      for (const server of servers) await server.close();
      await target.close();
    }
  });
});
