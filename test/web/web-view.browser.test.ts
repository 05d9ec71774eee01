/**
 * The web view in a real headless Chromium: tasks started by an SDK client
 * appear live, with progress and input_required; the page cancels a task; the client answers an
 * input request and the page sees the task complete; the page answers a question itself, re-runs
 * a task, cancels several, follows a deep link, links a task's trace id to the trace viewer,
 * filters with counts that follow, keeps the Finished chart in step with the counters, and holds its
 * layout at 900 and 1400 px. Screenshots go to artifacts/ (gitignored);
 * UPDATE_DOCS_SCREENSHOT=1 also writes docs/web-view.png and docs/screenshots/*.png for the README.
 */
import { join } from "node:path";
import { CreateTaskResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { context, propagation, trace } from "@opentelemetry/api";
import { node } from "@opentelemetry/sdk-node";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { webRoutes } from "../../src/web/web-routes.js";
import { ARTIFACTS, launchChromium, type Browser } from "../support/browser.js";
import { REPO_ROOT } from "../support/cli-process.js";
import { callToolAsTask, taskResult } from "../support/conformance.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";

const ADMIN_TOKEN = "admin-token-for-the-browser-test";
const TRACE_URL = "https://tracing.example/trace/{traceId}";

let browser: Browser;
let fx: HttpServerFixture | undefined;
let page: Page | undefined;

// A real tracer provider in this process, exporting nowhere: tasks get the trace id of the
// request that created them, as under the CLI's SDK, so the detail panel shows its trace line.
let provider: InstanceType<typeof node.NodeTracerProvider>;

beforeAll(async () => {
  provider = new node.NodeTracerProvider();
  provider.register();
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await provider?.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
});

afterEach(async () => {
  await page?.close();
  page = undefined;
  await fx?.close();
  fx = undefined;
});

async function serverWithView(): Promise<HttpServerFixture> {
  return startHttpServer({
    routes: (app) => webRoutes(app, { adminTokens: [ADMIN_TOKEN], feed: { countsEveryMs: 100 }, traceUrl: TRACE_URL }),
  });
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
const count = (p: Page, status: string, n: number) => p.locator(`.count[data-status="${status}"] b`, { hasText: new RegExp(`^${n}$`) });
const UPDATE_DOCS = process.env["UPDATE_DOCS_SCREENSHOT"] === "1";

/** A screenshot in artifacts/, and in docs/screenshots/ when the docs are being updated. */
async function shoot(p: Page, name: string): Promise<void> {
  await p.screenshot({ path: join(ARTIFACTS, name), fullPage: true });
  if (UPDATE_DOCS) await p.screenshot({ path: join(REPO_ROOT, "docs", "screenshots", name), fullPage: true });
}

/**
 * Words of the page's message cells and detail panel that the browser broke across two lines. A
 * script string: it runs in the page (the tests are compiled without the DOM library).
 */
function wordsBrokenAcrossLines(p: Page): Promise<string[]> {
  return p.evaluate(`(() => {
    const broken = [];
    for (const cell of document.querySelectorAll("td.msg, #detail p, #detail dd, #detail .why")) {
      const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const match of (node.textContent || "").matchAll(/[A-Za-z]{2,}/g)) {
          const range = document.createRange();
          range.setStart(node, match.index);
          range.setEnd(node, match.index + match[0].length);
          const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
          if (lines.size > 1) broken.push(match[0]);
        }
      }
    }
    return broken;
  })()`);
}

/** Buttons of the table and the panel that are not wholly inside the window and their scroll box. */
function clippedButtons(p: Page): Promise<string[]> {
  return p.evaluate(`(() => {
    const clipped = [];
    for (const button of document.querySelectorAll(".layout button, .toolbar button, .bulk button")) {
      const box = button.getBoundingClientRect();
      if (box.width === 0) continue;
      const wrap = button.closest(".table-wrap, .detail");
      const outer = wrap ? wrap.getBoundingClientRect() : { left: 0, right: window.innerWidth };
      if (box.left < Math.max(0, outer.left) - 0.5 || box.right > Math.min(window.innerWidth, outer.right) + 0.5) clipped.push(button.textContent);
    }
    return clipped;
  })()`);
}

describe("web view in headless Chromium", () => {
  it("shows tasks live with progress and input_required, cancels from the page, and sees an answered task complete", async () => {
    fx = await serverWithView();
    page = await openSignedIn(fx);
    const { client } = await fx.connect();

    // Started after the page is open: they can only appear through the live stream.
    const sleep = await client.request(
      {
        method: "tools/call",
        params: { name: "sleep", arguments: { ms: 60_000, steps: 60 }, task: {}, _meta: { progressToken: "sleep-1" } },
      },
      CreateTaskResultSchema,
    );
    const ask = await callToolAsTask(client, "ask", { question: "Ship the release?" });
    const sleepId = sleep.task.taskId;
    const askId = ask.task.taskId;

    await row(page, sleepId).locator("text=working").waitFor();
    await row(page, sleepId)
      .locator(".progress small", { hasText: /^[1-9]\d*\/60$/ })
      .waitFor();
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
    const timeline = await Promise.all(
      (await page.locator("#detail .timeline li[data-status]").all()).map((li) => li.getAttribute("data-status")),
    );
    expect(timeline).toEqual(["working", "input_required", "working", "completed"]);
    await page.locator('.count[data-status="completed"] b', { hasText: "1" }).waitFor();
    await page.locator('.count[data-status="cancelled"] b', { hasText: "1" }).waitFor();

    await page.screenshot({ path: join(ARTIFACTS, "web-view.png") });
    if (process.env["UPDATE_DOCS_SCREENSHOT"] === "1") {
      // For the README: a few more tasks so every status shows.
      await callToolAsTask(client, "fail", { message: "Upstream quota exceeded" });
      const done = await callToolAsTask(client, "sleep", { ms: 300 });
      await client.request(
        {
          method: "tools/call",
          params: { name: "sleep", arguments: { ms: 120_000, steps: 40 }, task: {}, _meta: { progressToken: "p2" } },
        },
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
    const payload = "<img src=x onerror=\"document.title='pwned'\">";
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

  it("a sign-in link whose token is not accepted says so (not that a session ended) and shows the sign-in form", async () => {
    fx = await serverWithView();
    page = await browser.context.newPage();
    await page.goto(`${new URL("/tasks", fx.url).href}#token=not-the-token`);
    await page.locator("#login-error", { hasText: "The token in this link was not accepted" }).waitFor();
    expect(await page.locator("#login").isVisible()).toBe(true);
    expect(page.url()).toBe(new URL("/tasks", fx.url).href);
  });

  it("answers a task's question from the page: the form follows the requested schema, and the task completes with the answer", async () => {
    fx = await serverWithView();
    page = await openSignedIn(fx);
    const { client } = await fx.connect();
    const ask = await callToolAsTask(client, "ask", { question: "Which colour?" });
    const id = ask.task.taskId;
    await page.locator(`tr[data-task-id="${id}"][data-status="input_required"]`).click();
    const form = page.locator("#detail form.question");
    await form.locator(".ask", { hasText: "Which colour?" }).waitFor();
    // Submitting without the required field is refused by the server with its reason, and the question stays.
    await form.locator('button[data-action="answer-accept"]').click();
    await form.locator(".error", { hasText: 'Missing required field "answer"' }).waitFor();
    await form.locator('input[data-field="answer"]').fill("teal");
    await shoot(page, "web-view-question-1400.png");
    await form.locator('button[data-action="answer-accept"]').click();
    await page.locator(`tr[data-task-id="${id}"][data-status="completed"]`).waitFor();
    await page.locator("#detail .exchange pre", { hasText: '"teal"' }).waitFor();
    expect((await fx.app.engine.store.get(id, { any: true }))?.outcome).toEqual({
      kind: "result",
      value: { content: [{ type: "text", text: "answer: teal" }] },
    });
  });

  it("the Finished chart follows the counters as soon as a task finishes, one answered from the page included", async () => {
    fx = await serverWithView();
    const p = await openSignedIn(fx);
    page = p;
    const { client } = await fx.connect();
    const finished = (n: number) => p.locator('[data-chart="throughput"] small', { hasText: new RegExp(`^${n} finished`) });
    // Well under the 5 s the charts wait between reloads of other changes: the chart moves with the counter.
    const soon = { timeout: 1500 };
    for (let n = 1; n <= 2; n++) {
      const done = await callToolAsTask(client, "sleep", { ms: 1 });
      await taskResult(client, done.task.taskId);
      await count(p, "completed", n).waitFor();
      await finished(n).waitFor(soon);
    }
    const ask = await callToolAsTask(client, "ask", { question: "Which colour?" });
    await p.locator(`tr[data-task-id="${ask.task.taskId}"][data-status="input_required"]`).click();
    const form = p.locator("#detail form.question");
    await form.locator('input[data-field="answer"]').fill("teal");
    await form.locator('button[data-action="answer-accept"]').click();
    await count(p, "completed", 3).waitFor();
    await finished(3).waitFor(soon);
  });

  it("re-runs a finished task from its panel: a new task with the same tool and arguments opens, and the URL names it", async () => {
    fx = await serverWithView();
    page = await openSignedIn(fx);
    const { client } = await fx.connect();
    const first = await callToolAsTask(client, "sleep", { ms: 5 });
    await taskResult(client, first.task.taskId);
    await page.locator(`tr[data-task-id="${first.task.taskId}"][data-status="completed"]`).click();
    await page.locator('#detail button[data-action="rerun"]').click();
    await page.locator("#notice", { hasText: "Re-run of" }).waitFor();
    await page.waitForFunction(`new URL(location.href).searchParams.get("task") !== ${JSON.stringify(first.task.taskId)}`);
    const rerunId = new URL(page.url()).searchParams.get("task") ?? "";
    await page.locator(`#detail .id`, { hasText: rerunId }).waitFor();
    await page.locator(`tr[data-task-id="${rerunId}"][data-tool="sleep"][data-status="completed"]`).waitFor();
    const rerun = await fx.app.engine.store.get(rerunId, { any: true });
    expect(rerun?.request).toEqual({ name: "sleep", arguments: { ms: 5 } });
  });

  it("cancels several ticked tasks at once, each recorded as cancelled from the web view", async () => {
    fx = await serverWithView();
    page = await openSignedIn(fx);
    const { client } = await fx.connect();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await callToolAsTask(client, "sleep", { ms: 60_000 })).task.taskId);
    await count(page, "working", 3).waitFor();
    for (const id of ids.slice(0, 2)) await row(page, id).locator('input[data-action="check"]').check();
    await page.locator("#bulk-count", { hasText: "2 selected" }).waitFor();
    await page.locator("#bulk-cancel").click();
    await page.locator("#bulk-cancel", { hasText: "Confirm" }).click();
    for (const id of ids.slice(0, 2)) await page.locator(`tr[data-task-id="${id}"][data-status="cancelled"]`).waitFor();
    await count(page, "cancelled", 2).waitFor();
    for (const id of ids.slice(0, 2))
      expect((await fx.app.engine.store.get(id, { any: true }))?.statusMessage).toBe("Cancelled from the web view by an operator");
    expect((await fx.app.engine.store.get(ids[2]!, { any: true }))?.status).toBe("working");
  });

  it("filters by tool and id: the counts follow, the URL keeps the filters, and a reload shows the same view", async () => {
    fx = await serverWithView();
    page = await openSignedIn(fx);
    const { client } = await fx.connect();
    const sleeping = await callToolAsTask(client, "sleep", { ms: 60_000 });
    await callToolAsTask(client, "sleep", { ms: 60_000 });
    const failed = await callToolAsTask(client, "fail", { message: "Upstream quota exceeded" });
    await taskResult(client, failed.task.taskId);
    await count(page, "working", 2).waitFor();
    await count(page, "failed", 1).waitFor();

    await page.locator("#f-tool").selectOption("fail");
    await count(page, "working", 0).waitFor();
    await count(page, "failed", 1).waitFor();
    await page.locator(`tr[data-task-id="${failed.task.taskId}"]`).waitFor();
    expect(await page.locator("tbody tr").count()).toBe(1);
    expect(new URL(page.url()).searchParams.get("tool")).toBe("fail");

    await page.locator("#f-tool").selectOption("");
    await page.locator("#f-id").fill(sleeping.task.taskId.slice(0, 13));
    await page.locator("#f-id").press("Enter");
    await count(page, "working", 1).waitFor();
    await count(page, "failed", 0).waitFor();
    expect(await page.locator("tbody tr").count()).toBe(1);

    await page.reload();
    await page.locator('#live[data-state="on"]').waitFor();
    expect(await page.locator("#f-id").inputValue()).toBe(sleeping.task.taskId.slice(0, 13));
    await count(page, "working", 1).waitFor();
    await row(page, sleeping.task.taskId).waitFor();
  });

  it("follows a deep link: the filters and the selected task's panel open from the URL", async () => {
    fx = await serverWithView();
    const { client } = await fx.connect();
    const failed = await callToolAsTask(client, "fail", { message: "Upstream quota exceeded" });
    await taskResult(client, failed.task.taskId);
    await callToolAsTask(client, "sleep", { ms: 60_000 });
    page = await browser.context.newPage();
    await page.goto(`${new URL("/tasks", fx.url).href}?tool=fail&task=${failed.task.taskId}#token=${ADMIN_TOKEN}`);
    await page.locator("#detail .id", { hasText: failed.task.taskId }).waitFor();
    await page.locator("#detail .badge", { hasText: "failed" }).waitFor();
    expect(await page.locator("#f-tool").inputValue()).toBe("fail");
    await row(page, failed.task.taskId).waitFor();
    expect(await page.locator("tbody tr").count()).toBe(1);
    expect(await page.locator(`tr[data-task-id="${failed.task.taskId}"].selected`).count()).toBe(1);
    // The token left the address bar; the deep link stayed.
    expect(page.url()).toBe(`${new URL("/tasks", fx.url).href}?tool=fail&task=${failed.task.taskId}`);
  });

  it("the detail panel links the task's trace id to the trace viewer", async () => {
    fx = await serverWithView();
    const { client } = await fx.connect();
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const created = await client.request(
      {
        method: "tools/call",
        params: { name: "sleep", arguments: { ms: 5 }, task: {}, _meta: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } },
      },
      CreateTaskResultSchema,
    );
    page = await openSignedIn(fx);
    await row(page, created.task.taskId).click();
    const link = page.locator("#detail a.trace");
    await link.waitFor();
    expect(await link.textContent()).toBe(traceId);
    expect(await link.getAttribute("href")).toBe(`https://tracing.example/trace/${traceId}`);
    expect(await link.getAttribute("rel")).toBe("noopener noreferrer");
  });

  it('shows in the detail panel when the task expires, as a time and as "expires in …"', async () => {
    fx = await serverWithView();
    const { client } = await fx.connect();
    const done = await callToolAsTask(client, "sleep", { ms: 0 }, { ttl: 7_200_000 });
    await taskResult(client, done.task.taskId);
    page = await browser.context.newPage();
    await page.goto(`${new URL("/tasks", fx.url).href}?task=${done.task.taskId}#token=${ADMIN_TOKEN}`);
    await page.locator("#detail .id", { hasText: done.task.taskId }).waitFor();
    const expires = page.locator("#detail dt", { hasText: /^Expires$/ }).locator("xpath=following-sibling::dd[1]");
    expect(await expires.textContent()).toMatch(/^\S.* \(expires in (1h 59m|2h 00m)\)$/);
  });

  it.each([1400, 900])(
    "holds its layout at %i px with the detail panel open: no word broken across lines, no button cut off",
    async (width) => {
      fx = await serverWithView();
      const { client } = await fx.connect();
      const message = "The upstream service refused the request because the monthly quota of the organisation was exceeded";
      const failed = await callToolAsTask(client, "fail", { message });
      await taskResult(client, failed.task.taskId);
      await callToolAsTask(client, "ask", { question: "Deploy the release candidate to production?" });
      await client.request(
        {
          method: "tools/call",
          params: { name: "sleep", arguments: { ms: 120_000, steps: 40 }, task: {}, _meta: { progressToken: "layout" } },
        },
        CreateTaskResultSchema,
      );
      const done = await callToolAsTask(client, "sleep", { ms: 5 });
      await taskResult(client, done.task.taskId);
      page = await browser.context.newPage();
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${new URL("/tasks", fx.url).href}#token=${ADMIN_TOKEN}`);
      await page.locator('#live[data-state="on"]').waitFor();
      await page.locator('tr[data-status="input_required"]').click();
      await page.locator("#detail form.question").waitFor();
      await page.locator("#detail a.trace").waitFor();
      await page.locator('tr[data-status="working"] .progress small', { hasText: /\/40$/ }).waitFor();
      // The charts: one task finished of each kind, shown in the throughput and the run-time charts.
      await page.locator('[data-chart="throughput"] small', { hasText: /^2 finished/ }).waitFor();
      await page.locator('[data-chart="durations"] small', { hasText: /^2 runs/ }).waitFor();
      expect(await wordsBrokenAcrossLines(page)).toEqual([]);
      expect(await clippedButtons(page)).toEqual([]);
      // Nothing makes the page itself scroll sideways.
      expect(await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")).toBe(true);
      await shoot(page, `web-view-${width}.png`);
    },
  );
});
