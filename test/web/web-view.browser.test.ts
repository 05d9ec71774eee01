/**
 * The web view in a real headless Chromium (issue 5 "Proof"): tasks started by an SDK client
 * appear live, with progress and input_required; the page cancels a task; the client answers an
 * input request and the page sees the task complete. Screenshots go to artifacts/ (gitignored);
 * UPDATE_DOCS_SCREENSHOT=1 also writes docs/web-view.png for the README.
 */
import { join } from "node:path";
import { CreateTaskResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { webRoutes } from "../../src/web/web-routes.js";
import { ARTIFACTS, launchChromium, type Browser } from "../support/browser.js";
import { REPO_ROOT } from "../support/cli-process.js";
import { callToolAsTask, taskResult } from "../support/conformance.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";

const ADMIN_TOKEN = "admin-token-for-the-browser-test";

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
  return startHttpServer({ routes: (app) => webRoutes(app, { adminTokens: [ADMIN_TOKEN], feed: { countsEveryMs: 100 } }) });
}

/** Opens /tasks and signs in with the admin token through the page's form. */
async function openSignedIn(server: HttpServerFixture): Promise<Page> {
  const opened = await browser.context.newPage();
  await opened.goto(new URL("/tasks", server.url).href);
  await opened.locator("#token").fill(ADMIN_TOKEN);
  await opened.locator("#login-form button[type=submit]").click();
  await opened.locator('#live[data-state="on"]').waitFor();
  return opened;
}

const row = (p: Page, taskId: string) => p.locator(`tr[data-task-id="${taskId}"]`);

describe("web view in headless Chromium", () => {
  it("shows tasks live with progress and input_required, cancels from the page, and sees an answered task complete", async () => {
    fx = await serverWithView();
    page = await openSignedIn(fx);
    const { client } = await fx.connect();

    // Started after the page is open: they can only appear through the live stream.
    const sleep = await client.request(
      { method: "tools/call", params: { name: "sleep", arguments: { ms: 60_000, steps: 60 }, task: {}, _meta: { progressToken: "sleep-1" } } },
      CreateTaskResultSchema,
    );
    const ask = await callToolAsTask(client, "ask", { question: "Ship the release?" });
    const sleepId = sleep.task.taskId;
    const askId = ask.task.taskId;

    await row(page, sleepId).locator("text=working").waitFor();
    await row(page, sleepId).locator(".progress small", { hasText: /^[1-9]\d*\/60$/ }).waitFor();
    await page.locator(`tr[data-task-id="${askId}"][data-status="input_required"]`).waitFor();
    await page.locator('.count[data-status="input_required"] b', { hasText: "1" }).waitFor();

    // The detail panel shows the question waiting for the requestor.
    await row(page, askId).click();
    await page.locator("#detail .question .waiting").waitFor();
    expect(await page.locator("#detail .question .ask").first().textContent()).toContain("Ship the release?");
    await page.screenshot({ path: join(ARTIFACTS, "web-view-live.png") });

    // Cancel the sleep from the page (two clicks: arm, confirm).
    const cancel = row(page, sleepId).locator('button[data-action="cancel"]');
    await cancel.click();
    await cancel.click();
    await page.locator(`tr[data-task-id="${sleepId}"][data-status="cancelled"]`).waitFor();
    expect((await fx.app.engine.store.get(sleepId, { any: true }))?.status).toBe("cancelled");

    // The client answers the question through tasks/result; the page sees the task complete.
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { answer: "yes" } }));
    const result = await taskResult(client, askId);
    expect(result.content).toEqual([{ type: "text", text: "answer: yes" }]);
    await page.locator(`tr[data-task-id="${askId}"][data-status="completed"]`).waitFor();
    await page.locator('#detail .timeline li[data-status="completed"]').waitFor();
    const timeline = await Promise.all((await page.locator("#detail .timeline li").all()).map((li) => li.getAttribute("data-status")));
    expect(timeline).toEqual(["working", "input_required", "working", "completed"]);
    await page.locator('.count[data-status="completed"] b', { hasText: "1" }).waitFor();
    await page.locator('.count[data-status="cancelled"] b', { hasText: "1" }).waitFor();

    await page.screenshot({ path: join(ARTIFACTS, "web-view.png") });
    if (process.env["UPDATE_DOCS_SCREENSHOT"] === "1") {
      // For the README: a few more tasks so every status shows.
      await callToolAsTask(client, "fail", { message: "Upstream quota exceeded" });
      const done = await callToolAsTask(client, "sleep", { ms: 300 });
      await client.request(
        { method: "tools/call", params: { name: "sleep", arguments: { ms: 120_000, steps: 40 }, task: {}, _meta: { progressToken: "p2" } } },
        CreateTaskResultSchema,
      );
      await taskResult(client, done.task.taskId);
      await page.locator('tr[data-tool="fail"][data-status="failed"]').waitFor();
      await page.locator('tr[data-status="working"] .progress small', { hasText: /\/40$/ }).waitFor();
      await page.screenshot({ path: join(REPO_ROOT, "docs", "web-view.png") });
    }
  });

  it("renders what tasks carry as text, never as markup", async () => {
    fx = await serverWithView();
    page = await openSignedIn(fx);
    const { client } = await fx.connect();
    const payload = '<img src=x onerror="document.title=\'pwned\'">';
    const failed = await callToolAsTask(client, "fail", { message: payload });
    await taskResult(client, failed.task.taskId);
    const message = row(page, failed.task.taskId).locator("td.msg");
    await message.waitFor();
    expect(await message.textContent()).toBe(payload);
    expect(await page.locator("tbody img").count()).toBe(0);
    expect(await page.title()).not.toBe("pwned");
  });

  it("refuses a wrong token at sign-in and keeps the token out of the URL and local storage", async () => {
    fx = await serverWithView();
    page = await browser.context.newPage();
    await page.goto(new URL("/tasks", fx.url).href);
    await page.locator("#token").fill("not-the-token");
    await page.locator("#login-form button[type=submit]").click();
    await page.locator("#login-error", { hasText: "refused" }).waitFor();
    expect(await page.locator("#view").isHidden()).toBe(true);

    await page.locator("#token").fill(ADMIN_TOKEN);
    await page.locator("#login-form button[type=submit]").click();
    await page.locator('#live[data-state="on"]').waitFor();
    expect(page.url()).not.toContain(ADMIN_TOKEN);
    // The page keeps it in sessionStorage (this tab only), never in localStorage.
    expect(await page.evaluate("JSON.stringify(Object.assign({}, localStorage))")).not.toContain(ADMIN_TOKEN);
    expect(await page.content()).not.toContain(ADMIN_TOKEN);
  });

  it("signs in from a sign-in link (/tasks#token=…, as npm start prints) and drops the token from the address bar", async () => {
    fx = await serverWithView();
    page = await browser.context.newPage();
    await page.goto(`${new URL("/tasks", fx.url).href}#token=${ADMIN_TOKEN}`);
    await page.locator('#live[data-state="on"]').waitFor();
    expect(page.url()).toBe(new URL("/tasks", fx.url).href);
  });
});
