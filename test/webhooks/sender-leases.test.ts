/**
 * Whose lease an event row carries when its transition writes it (PostgreSQL): a sender that
 * leases its process's writes is named in the row at once, so it sends the row without a claim; a
 * cluster's front, which runs no handlers, leaves its few rows unleased for a claim.
 */
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/logger.js";
import { localEventBus } from "../../src/events/local-event-bus.js";
import { parseWebhooks } from "../../src/runtime/webhooks/webhook-config.js";
import { routeWebhooks } from "../../src/runtime/webhooks/webhook-routing.js";
import { WebhookSender } from "../../src/runtime/webhooks/webhook-sender.js";
import { postgresStore } from "../../src/store/postgres/postgres-store.js";
import { pgQuery, TEST_PG_URL, uniqueName } from "../support/postgres.js";

const schema = uniqueName("mcp_tasks_sender_leases");
afterAll(async () => {
  await pgQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
});

// Nothing wakes the sender but its start and this poll: the row stays as its transition wrote it.
const settings = parseWebhooks({
  endpoints: [{ id: "ci", url: "http://127.0.0.1:9/hook", secret: `whsec_${randomBytes(24).toString("base64")}` }],
  pollIntervalMs: 600_000,
});

describe.each([
  { who: "a sender that leases its process's writes", leaseOwnWrites: true, named: true },
  { who: "a front's sender, which does not", leaseOwnWrites: false, named: false },
])("the event row of a transition, with $who", ({ leaseOwnWrites, named }) => {
  it(named ? "names that sender as the row's lease owner" : "is written unleased, for a claim", async () => {
    const store = postgresStore(TEST_PG_URL, { schema, poolSize: 2 });
    const senderId = `sender-${randomBytes(4).toString("hex")}`;
    const sender = new WebhookSender({ store, settings, bus: localEventBus(), logger: silentLogger, senderId, leaseOwnWrites });
    try {
      await store.migrate();
      sender.start();
      const id = randomBytes(16).toString("hex");
      const now = Date.now();
      await store.create({
        id,
        owner: null,
        method: "tools/call",
        name: "sleep",
        request: { name: "sleep", arguments: {} },
        origin: { sessionId: null, progressToken: null, accepts: [], webhooks: routeWebhooks(settings, null) },
        createdAt: now,
        ttlMs: 60_000,
        pollIntervalMs: 1000,
        retryable: false,
      });
      await store.transition(id, ["working"], "cancelled", { now: Date.now(), statusMessage: "cancelled" });
      const { rows } = await pgQuery(`SELECT type, lease_owner FROM "${schema}".webhook_outbox WHERE task_id = $1`, [id]);
      expect(rows).toEqual([{ type: "task.cancelled", lease_owner: named ? senderId : null }]);
    } finally {
      await sender.stop();
      await store.close();
    }
  });
});
