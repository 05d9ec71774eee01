/**
 * Task events delivered as Standard Webhooks by a real server (SQLite store) to a real receiving
 * HTTP server; every delivery is verified with the reference implementation (standardwebhooks).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import type { WebhooksInput } from "../../src/runtime/webhooks/webhook-config.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { OutboxDelivery } from "../../src/store/outbox-store.js";
import { callToolAsTask } from "../support/conformance.js";
import { inMemoryFixture, type Fixture } from "../support/in-memory-fixture.js";
import { httpReceiver, type HttpReceiver, type Received } from "../support/http-receiver.js";

const secret = `whsec_${randomBytes(24).toString("base64")}`;
const dir = mkdtempSync(join(tmpdir(), "webhooks-delivery-"));
let files = 0;

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

async function receiver(): Promise<HttpReceiver> {
  const made = await httpReceiver();
  open.push(made);
  return made;
}

async function server(webhooks: WebhooksInput): Promise<Fixture> {
  const fixture = await inMemoryFixture({ store: sqliteStore(join(dir, `tasks-${++files}.db`)), webhooks });
  open.push(fixture);
  return fixture;
}

/** The endpoint config for `target`, on 127.0.0.1 (allow-listed) with fast retries and timeouts. */
function endpointFor(target: HttpReceiver, extra: Partial<WebhooksInput> = {}, endpoint: Record<string, unknown> = {}): WebhooksInput {
  return {
    endpoints: [{ id: "ci", url: target.url, secret, allowPrivate: ["127.0.0.1"], ...endpoint }],
    firstRetryDelayMs: 50,
    maxRetryDelayMs: 200,
    responseTimeoutMs: 2000,
    pollIntervalMs: 50,
    ...extra,
  };
}

/** Verified with the reference implementation: throws unless the signature holds. */
function verified(request: Received): { type: string; timestamp: string; data: Record<string, unknown> } {
  const headers = {
    "webhook-id": String(request.headers["webhook-id"]),
    "webhook-timestamp": String(request.headers["webhook-timestamp"]),
    "webhook-signature": String(request.headers["webhook-signature"]),
  };
  return new Webhook(secret).verify(request.body, headers) as { type: string; timestamp: string; data: Record<string, unknown> };
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out; last value ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const deliveries = (fixture: Fixture, taskId?: string): Promise<OutboxDelivery[]> =>
  fixture.app.engine.outbox!.deliveries(taskId === undefined ? {} : { taskId }, 100);

describe("webhook delivery", () => {
  it("delivers task.completed, signed as Standard Webhooks (verified by the reference implementation)", async () => {
    const target = await receiver();
    const app = await server(endpointFor(target));
    const created = await callToolAsTask(app.client, "sleep", { ms: 1 }, { ttl: 60_000 });
    const [request] = await target.waitFor(1);
    const event = verified(request!);
    expect(event).toMatchObject({
      type: "task.completed",
      data: { taskId: created.task.taskId, status: "completed", tool: "sleep", ttl: 60_000, owner: null },
    });
    expect(event.data).not.toHaveProperty("result");
    expect(request!.headers["webhook-id"]).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(request!.headers["content-type"]).toBe("application/json");
    await until(
      () => deliveries(app),
      (rows) => rows[0]?.state === "delivered",
    );
    expect((await deliveries(app))[0]).toMatchObject({ attempts: 1, lastStatus: 204, state: "delivered" });
  });

  it("carries the result when the endpoint asks for it and it fits, and only the events it wants", async () => {
    const target = await receiver();
    const app = await server(endpointFor(target, {}, { includeResult: true, events: ["task.failed"] }));
    await callToolAsTask(app.client, "sleep", { ms: 1 }, { ttl: 60_000 });
    const failed = await callToolAsTask(app.client, "fail", { message: "nope" }, { ttl: 60_000 });
    const [request] = await target.waitFor(1);
    expect(verified(request!)).toMatchObject({
      type: "task.failed",
      data: { taskId: failed.task.taskId, result: { content: [{ type: "text", text: "nope" }], isError: true } },
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(target.received).toHaveLength(1);
  });

  it("retries a 500 with the same webhook-id until a 2xx", async () => {
    const target = await receiver();
    let answers = 0;
    target.answer((_request, response) => response.writeHead(++answers <= 2 ? 500 : 200).end());
    const app = await server(endpointFor(target));
    await callToolAsTask(app.client, "sleep", { ms: 1 }, { ttl: 60_000 });
    const requests = await target.waitFor(3);
    expect(new Set(requests.map((r) => r.headers["webhook-id"])).size).toBe(1);
    for (const request of requests) verified(request);
    const [row] = await until(
      () => deliveries(app),
      (rows) => rows[0]?.state === "delivered",
    );
    expect(row).toMatchObject({ attempts: 3, lastStatus: 200 });
  });

  it("disables the endpoint on 410 Gone: later events stay queued, and a redeliver sends them", async () => {
    const target = await receiver();
    target.answer((_request, response) => response.writeHead(410).end());
    const app = await server(endpointFor(target));
    await callToolAsTask(app.client, "sleep", { ms: 1 }, { ttl: 60_000 });
    await target.waitFor(1);
    const outbox = app.app.engine.outbox!;
    await until(
      () => outbox.disabledUrls(),
      (urls) => urls.length === 1,
    );
    await callToolAsTask(app.client, "sleep", { ms: 1 }, { ttl: 60_000 });
    await until(
      () => deliveries(app),
      (rows) => rows.length === 2,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(target.received).toHaveLength(1);
    expect((await deliveries(app)).map((row) => row.state).sort()).toEqual(["dead", "pending"]);
    target.answer((_request, response) => response.writeHead(200).end());
    expect(await outbox.redeliver({ url: target.url }, Date.now())).toBe(1);
    app.app.engine.webhookSender?.wake();
    await target.waitFor(3);
    await until(
      () => deliveries(app),
      (rows) => rows.every((row) => row.state === "delivered"),
    );
  });

  it("times out a receiver that takes 10 s, and retries with the same webhook-id", async () => {
    const target = await receiver();
    let calls = 0;
    target.answer((_request, response) => {
      if (++calls === 1) setTimeout(() => response.writeHead(200).end(), 10_000).unref();
      else response.writeHead(200).end();
    });
    const app = await server(endpointFor(target, { responseTimeoutMs: 300 }));
    await callToolAsTask(app.client, "sleep", { ms: 1 }, { ttl: 60_000 });
    const requests = await target.waitFor(2);
    expect(requests[0]!.headers["webhook-id"]).toBe(requests[1]!.headers["webhook-id"]);
    const [row] = await until(
      () => deliveries(app),
      (rows) => rows[0]?.state === "delivered",
    );
    expect(row?.attempts).toBe(2);
  });

  it("refuses a URL whose name resolves to 127.0.0.1 unless allow-listed: nothing is sent, the row says why", async () => {
    const target = await receiver();
    const app = await server(endpointFor(target, {}, { url: `http://localhost:${target.port}/hook`, allowPrivate: [] }));
    await callToolAsTask(app.client, "sleep", { ms: 1 }, { ttl: 60_000 });
    const [row] = await until(
      () => deliveries(app),
      (rows) => (rows[0]?.attempts ?? 0) >= 1,
    );
    expect(row?.lastError).toMatch(/refused: .*loopback/);
    expect(target.received).toHaveLength(0);
  });

  it("does not follow a redirect: a 302 is a failed attempt, the other URL never hears", async () => {
    const target = await receiver();
    const elsewhere = await receiver();
    target.answer((_request, response) => response.writeHead(302, { location: elsewhere.url }).end());
    const app = await server(endpointFor(target));
    await callToolAsTask(app.client, "sleep", { ms: 1 }, { ttl: 60_000 });
    const [row] = await until(
      () => deliveries(app),
      (rows) => (rows[0]?.attempts ?? 0) >= 1,
    );
    expect(row).toMatchObject({ lastStatus: 302, lastError: "HTTP 302", state: "pending" });
    expect(elsewhere.received).toHaveLength(0);
  });

  it("dead-letters an event whose retry window ran out", async () => {
    const target = await receiver();
    target.answer((_request, response) => response.writeHead(503).end());
    const app = await server(endpointFor(target, { retryWindowMs: 300 }));
    await callToolAsTask(app.client, "sleep", { ms: 1 }, { ttl: 60_000 });
    const [row] = await until(
      () => deliveries(app),
      (rows) => rows[0]?.state === "dead",
    );
    expect(row?.lastError).toBe("HTTP 503");
    expect(await app.app.engine.outbox!.outboxStats()).toMatchObject({ pending: 0, dead: 1 });
  });

  it("keeps a slow endpoint from delaying another one", async () => {
    const slow = await receiver();
    slow.answer((_request, response) => void setTimeout(() => response.writeHead(200).end(), 1500).unref());
    const fast = await receiver();
    const app = await server({
      endpoints: [
        { id: "slow", url: slow.url, secret, allowPrivate: ["127.0.0.1"] },
        { id: "fast", url: fast.url, secret, allowPrivate: ["127.0.0.1"] },
      ],
      concurrencyPerEndpoint: 1,
      pollIntervalMs: 50,
    });
    for (let i = 0; i < 3; i++) await callToolAsTask(app.client, "sleep", { ms: 1 }, { ttl: 60_000 });
    const started = Date.now();
    await fast.waitFor(3);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(slow.received.length).toBeLessThanOrEqual(1);
  });
});
