/**
 * Queue control in a real headless Chromium (queues.js): an admin pauses a tool, a requestor's
 * task of it is created and waits in the queue saying why, the admin resumes it and the task
 * runs; a purge empties a tool's queue; a bulk retry re-runs every failed task of the view's
 * filter. Screenshots go to artifacts/; UPDATE_DOCS_SCREENSHOT=1 also writes them to
 * docs/screenshots/ for docs/web-view.md.
 */
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { webRoutes } from "../../src/web/web-routes.js";
import { ARTIFACTS, launchChromium, type Browser } from "../support/browser.js";
import { REPO_ROOT } from "../support/cli-process.js";
import { callToolAsTask, getTask } from "../support/conformance.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";

const ADMIN_TOKEN = "admin-token-for-the-queue-browser-test";
const UPDATE_DOCS = process.env["UPDATE_DOCS_SCREENSHOT"] === "1";

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

async function serverWithView(): Promise<HttpServerFixture> {
  fx = await startHttpServer({ routes: (app) => webRoutes(app, { adminTokens: [ADMIN_TOKEN], feed: { countsEveryMs: 100 } }) });
  return fx;
}

async function openSignedIn(server: HttpServerFixture, path = "/tasks"): Promise<Page> {
  const opened = await browser.context.newPage();
  await opened.setViewportSize({ width: 1400, height: 900 });
  await opened.goto(new URL(path, server.url).href);
  await opened.locator("#token").fill(ADMIN_TOKEN);
  await opened.locator("#login-form button[type=submit]").click();
  await opened.locator('#live[data-state="on"]').waitFor();
  await opened.locator("#queues .queue-row[data-tool]").first().waitFor();
  return opened;
}

async function shoot(p: Page, name: string): Promise<void> {
  await p.screenshot({ path: join(ARTIFACTS, name), fullPage: true });
  if (UPDATE_DOCS) await p.screenshot({ path: join(REPO_ROOT, "docs", "screenshots", name), fullPage: true });
}

const queueRow = (p: Page, tool: string) => p.locator(`#queues .queue-row[data-tool="${tool}"]`);
const taskRow = (p: Page, taskId: string) => p.locator(`tr[data-task-id="${taskId}"]`);

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("web view: queue control", { timeout: 60_000 }, () => {
  it("pause → create → resume: the task waits in the queue saying the tool is paused, and runs once resumed", async () => {
    const server = await serverWithView();
    const client = (await server.connect()).client;
    page = await openSignedIn(server);
    await queueRow(page, "sleep").locator('button[data-action="pause"]').click();
    await queueRow(page, "sleep").locator(".queue-state.paused").waitFor();
    await expect.poll(() => page?.locator("#notice").textContent()).toBe("sleep paused: new tasks are queued.");

    const { task } = await callToolAsTask(client, "sleep", { ms: 50 });
    await taskRow(page, task.taskId).waitFor();
    await taskRow(page, task.taskId).locator("td.msg", { hasText: "the tool sleep is paused" }).waitFor();
    await queueRow(page, "sleep").locator(".queued", { hasText: /^1$/ }).waitFor();
    expect((await getTask(client, task.taskId)).status).toBe("working");
    await shoot(page, "web-view-queues-paused.png");

    await queueRow(page, "sleep").locator('button[data-action="resume"]').click();
    await queueRow(page, "sleep").locator(".queue-state.running").waitFor();
    await taskRow(page, task.taskId).locator('[data-status="completed"]').waitFor();
    expect((await getTask(client, task.taskId)).status).toBe("completed");
  });

  it("purge: a second click on a tool's Purge cancels its queued tasks, each saying who purged it", async () => {
    const server = await serverWithView();
    const client = (await server.connect()).client;
    page = await openSignedIn(server);
    await server.app.engine.pauseTool("batch", "admin");
    const queued = [(await callToolAsTask(client, "batch", { ms: 10 })).task, (await callToolAsTask(client, "batch", { ms: 10 })).task];
    const purge = queueRow(page, "batch").locator('button[data-action="purge"]');
    await purge.waitFor();
    await purge.click();
    await expect.poll(() => purge.textContent()).toBe("Purge 2?");
    await shoot(page, "web-view-queues-purge.png");
    await purge.click();
    await expect.poll(() => page?.locator("#notice").textContent()).toBe("Purged 2 queued batch tasks.");
    for (const task of queued) {
      await taskRow(page, task.taskId).locator('[data-status="cancelled"]').waitFor();
      const after = await getTask(client, task.taskId);
      expect(after.status).toBe("cancelled");
      expect(after.statusMessage).toBe("Purged from the queue by admin");
    }
    await queueRow(page, "batch").locator(".queued", { hasText: /^0$/ }).waitFor();
  });

  it("bulk retry: Retry failed re-runs every failed task the filter shows, as new tasks linked to the old ones", async () => {
    const server = await serverWithView();
    const client = (await server.connect()).client;
    const failed = [
      (await callToolAsTask(client, "fail", { message: "one" })).task,
      (await callToolAsTask(client, "fail", { message: "two" })).task,
    ];
    const other = (await callToolAsTask(client, "throw", { code: -32001, message: "not in the filter" })).task;
    for (const task of [...failed, other]) {
      await until(
        () => getTask(client, task.taskId),
        (t) => t.status === "failed",
      );
    }
    page = await openSignedIn(server, "/tasks?status=failed&tool=fail");
    for (const task of failed) await taskRow(page, task.taskId).waitFor();
    await page.locator("#retry-filter").click();
    await expect.poll(() => page?.locator("#retry-filter").textContent()).toBe("Re-run every failed task shown?");
    await page.locator("#retry-filter").click();
    await expect.poll(() => page?.locator("#notice").textContent()).toBe("Re-ran 2 failed tasks as new tasks.");
    await shoot(page, "web-view-queues-retry.png");
    const reruns = await until(
      async () =>
        (await server.app.engine.inspect.search({ scope: { any: true }, name: "fail" }, null, 10)).filter((t) => t.origin.rerunOf),
      (found) => found.length === 2,
    );
    expect(reruns.map((t) => t.origin.rerunOf).sort()).toEqual(failed.map((t) => t.taskId).sort());
    expect(await server.app.engine.inspect.search({ scope: { any: true }, name: "throw" }, null, 10)).toHaveLength(1);
  });
});
