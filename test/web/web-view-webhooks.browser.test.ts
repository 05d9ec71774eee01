/**
 * A task's webhook deliveries in the web view, in a real headless Chromium (docs/webhooks.md,
 * "Seeing and operating it"): the task's detail lists its delivery dead-lettered after a receiver
 * that kept answering 503, and its "Redeliver" sends it again — the real receiving HTTP server
 * gets the same `webhook-id`, verified with the reference implementation (standardwebhooks).
 */
import { randomBytes } from "node:crypto";
import type { Page } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { webRoutes } from "../../src/web/web-routes.js";
import { launchChromium, type Browser } from "../support/browser.js";
import { callToolAsTask } from "../support/conformance.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { httpReceiver, type HttpReceiver } from "../support/http-receiver.js";

const ADMIN_TOKEN = "admin-token-for-the-webhooks-view-test";
const secret = `whsec_${randomBytes(24).toString("base64")}`;

let browser: Browser;
let fx: HttpServerFixture | undefined;
let target: HttpReceiver | undefined;
let page: Page | undefined;

beforeAll(async () => {
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

afterEach(async () => {
  await page?.close();
  page = undefined;
  await fx?.close();
  fx = undefined;
  await target?.close();
  target = undefined;
});

describe("webhook deliveries in the web view (headless Chromium)", { timeout: 60_000 }, () => {
  it("lists a task's dead-lettered delivery, and its Redeliver sends it again under the same webhook-id", async () => {
    target = await httpReceiver();
    target.answer((_request, response) => response.writeHead(503).end());
    fx = await startHttpServer({
      app: {
        webhooks: {
          endpoints: [{ id: "ci", url: target.url, secret, allowPrivate: ["127.0.0.1"] }],
          firstRetryDelayMs: 50,
          maxRetryDelayMs: 100,
          retryWindowMs: 300,
          pollIntervalMs: 50,
        },
      },
      routes: (app) => webRoutes(app, { adminTokens: [ADMIN_TOKEN] }),
    });
    const { client } = await fx.connect();
    const taskId = (await callToolAsTask(client, "sleep", { ms: 1 }, { ttl: 60_000 })).task.taskId;
    const outbox = fx.app.engine.outbox!;
    const deadline = Date.now() + 10_000;
    while ((await outbox.deliveries({ taskId, state: "dead" }, 1)).length === 0) {
      if (Date.now() > deadline) throw new Error("the delivery was never dead-lettered");
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const [dead] = await outbox.deliveries({ taskId }, 1);
    const triedBefore = target.received.length;
    target.answer((_request, response) => response.writeHead(204).end());

    page = await browser.context.newPage();
    await page.goto(`${new URL("/tasks", fx.url).href}#token=${ADMIN_TOKEN}`);
    await page.locator(`tr[data-task-id="${taskId}"]`).click();
    const item = page.locator(`#detail ol.deliveries li[data-delivery-id="${dead!.id}"]`);
    await item.waitFor();
    expect(await item.getAttribute("data-state")).toBe("dead");
    expect(await item.textContent()).toContain("task.completed");
    expect(await item.textContent()).toContain("HTTP 503");
    expect(await page.locator("#detail").textContent()).not.toContain(secret);

    await item.locator('button[data-action="redeliver"]').click();
    await page.locator("#notice", { hasText: `Delivery ${dead!.id} queued again.` }).waitFor();
    const [again] = (await target.waitFor(triedBefore + 1)).slice(triedBefore);
    expect(again!.headers["webhook-id"]).toBe(dead!.id);
    const event = new Webhook(secret).verify(again!.body, {
      "webhook-id": String(again!.headers["webhook-id"]),
      "webhook-timestamp": String(again!.headers["webhook-timestamp"]),
      "webhook-signature": String(again!.headers["webhook-signature"]),
    }) as { type: string; data: { taskId: string } };
    expect(event).toMatchObject({ type: "task.completed", data: { taskId } });

    // The detail, read again, shows it delivered.
    while ((await outbox.deliveries({ id: dead!.id }, 1))[0]?.state !== "delivered")
      await new Promise((resolve) => setTimeout(resolve, 25));
    await page.locator(`tr[data-task-id="${taskId}"]`).click();
    await page.locator(`#detail ol.deliveries li[data-delivery-id="${dead!.id}"][data-state="delivered"]`).waitFor();
  });
});
