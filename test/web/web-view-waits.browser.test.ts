/**
 * Waiting tasks in the web view, in a real headless Chromium: each waiting row says how it waits
 * (parked) and for what until when (its status message), the "Parked" filter keeps only those, and
 * an admin's "Emit event" on an approve task wakes it to completion.
 */
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { webRoutes } from "../../src/web/web-routes.js";
import { launchChromium, type Browser } from "../support/browser.js";
import { callToolAsTask } from "../support/conformance.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";

const ADMIN_TOKEN = "admin-token-for-the-waits-view-test";

let browser: Browser;
let fx: HttpServerFixture | undefined;
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
});

async function parked(taskId: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await fx!.app.engine.inspect.task(taskId))?.waitMode !== "parked") {
    if (Date.now() > deadline) throw new Error(`${taskId} never parked`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("waiting tasks in the web view (headless Chromium)", { timeout: 60_000 }, () => {
  it("shows what each waits for, filters the parked ones, and an admin's Emit event approves", async () => {
    fx = await startHttpServer({ routes: (app) => webRoutes(app, { adminTokens: [ADMIN_TOKEN] }) });
    const { client } = await fx.connect();
    const approving = (await callToolAsTask(client, "approve", { action: "release 4.2" })).task.taskId;
    const napping = (await callToolAsTask(client, "nap", { ms: 3_600_000 })).task.taskId;
    const running = (await callToolAsTask(client, "sleep", { ms: 60_000 })).task.taskId;
    await parked(approving);
    await parked(napping);

    page = await browser.context.newPage();
    await page.goto(`${new URL("/tasks", fx.url).href}#token=${ADMIN_TOKEN}`);
    await page.locator('#live[data-state="on"]').waitFor();
    const row = (id: string) => page!.locator(`tr[data-task-id="${id}"]`);
    await row(approving).locator(".wait.parked").waitFor();
    expect(await row(approving).locator("td.msg").textContent()).toBe(`parkedWaiting for approval/${approving}`);
    expect(await row(napping).locator("td.msg").textContent()).toMatch(/^parkedSleeping until \d{4}-\d\d-\d\dT/);
    expect(await row(running).locator(".wait").count()).toBe(0);

    await page.locator("#f-parked").check();
    await row(approving).waitFor();
    await row(napping).waitFor();
    expect(await row(running).count()).toBe(0);
    expect(page.url()).toContain("parked=1");

    await row(approving).click();
    const form = page.locator("#detail form.emit");
    await form.waitFor();
    expect(await form.locator('[data-field="emit-name"]').inputValue()).toBe(`approval/${approving}`);
    await form.locator('[data-field="emit-payload"]').fill("{not json");
    await form.locator('button[data-action="emit"]').click();
    await form.locator(".error", { hasText: "The payload is not JSON." }).waitFor();
    await form.locator('[data-field="emit-payload"]').fill('{"approved": true, "by": "the web view"}');
    await form.locator('button[data-action="emit"]').click();
    await page.locator("#notice", { hasText: `Emitted approval/${approving}: woke 1 task.` }).waitFor();
    // Completed, it is no longer parked: the filter drops it.
    await row(approving).waitFor({ state: "detached" });
    expect((await fx.app.engine.store.get(approving, { any: true }))?.outcome).toEqual({
      kind: "result",
      value: { content: [{ type: "text", text: "approved by the web view: release 4.2" }] },
    });
  });
});
