/**
 * The operator's console in a real headless Chromium (docs/web-view.md): a principal starts a tool
 * from the form drawn from its input schema (a field left out is named by the server; a tool that
 * forbids tasks is listed without a Start), and the new task opens at once; the timeline of a task
 * that was interrupted (its server drained it away mid-run) and re-run by the next start on the same
 * SQLite file shows both runs, why the first ended, and each step with the run that ran it.
 * Screenshots go to artifacts/; UPDATE_DOCS_SCREENSHOT=1 also writes them to docs/screenshots/.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { staticTokenVerifier } from "../../src/http/bearer-auth.js";
import { HANDED_BACK_LOCAL_MESSAGE } from "../../src/runtime/drain.js";
import { HANDED_BACK_RERUN_MESSAGE } from "../../src/runtime/upkeep/recovery.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { webRoutes } from "../../src/web/web-routes.js";
import { ARTIFACTS, launchChromium, type Browser } from "../support/browser.js";
import { REPO_ROOT } from "../support/cli-process.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { webApi } from "../support/web-client.js";

const ADMIN_TOKEN = "admin-token-for-the-console-browser-test";
const ALICE_TOKEN = "tok-alice-console-browser";
const UPDATE_DOCS = process.env["UPDATE_DOCS_SCREENSHOT"] === "1";

let browser: Browser;
let fx: HttpServerFixture | undefined;
let page: Page | undefined;
let dir: string | undefined;

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
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

async function serve(store?: string): Promise<HttpServerFixture> {
  const verifier = staticTokenVerifier(new Map([[ALICE_TOKEN, "alice"]]));
  return startHttpServer({
    app: store === undefined ? {} : { store: sqliteStore(store) },
    http: { verifier },
    routes: (app) => webRoutes(app, { adminTokens: [ADMIN_TOKEN], verifier, feed: { countsEveryMs: 100 } }),
  });
}

/** A screenshot in artifacts/, and in docs/screenshots/ when the docs are being updated. */
async function shoot(p: Page, name: string): Promise<void> {
  // One shot written twice: a second full-page shot resizes the page again under the test's next click.
  const png = await p.screenshot({ path: join(ARTIFACTS, name), fullPage: true });
  if (UPDATE_DOCS) writeFileSync(join(REPO_ROOT, "docs", "screenshots", name), png);
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("the operator's console (headless Chromium)", { timeout: 60_000 }, () => {
  it("starts a tool from the form built from its input schema, as the signed-in principal, and opens the new task", async () => {
    fx = await serve();
    page = await browser.context.newPage();
    await page.goto(`${new URL("/tasks", fx.url).href}#token=${ALICE_TOKEN}`);
    await page.locator('#live[data-state="on"]').waitFor();

    await page.locator('button[data-action="start-tool"]').click();
    const tools = page.locator("#detail ul.tools");
    await tools.waitFor();
    // A tool that forbids tasks is shown, and says so, but has no Start.
    const echo = tools.locator('li[data-tool="echo"]');
    expect(await echo.getAttribute("data-support")).toBe("forbidden");
    expect(await echo.locator('button[data-action="open-start"]').count()).toBe(0);
    expect(await tools.locator('li[data-tool="batch"] .support').textContent()).toBe("tasks required");

    await tools.locator('li[data-tool="steps"] button[data-action="open-start"]').click();
    const form = page.locator('#detail form.start-form[data-tool="steps"]');
    await form.waitFor();
    expect(await form.locator('input[data-field="count"]').getAttribute("type")).toBe("number");
    // Only count: the server names the field left out, and nothing is created.
    await form.locator('input[data-field="count"]').fill("3");
    await form.locator('button[data-action="start"]').click();
    await form.locator(".error", { hasText: /Invalid arguments for tool steps: ms: / }).waitFor();
    expect(await fx.app.engine.inspect.search({ scope: { any: true } }, null, 10)).toEqual([]);
    await form.locator('input[data-field="ms"]').fill("40");
    await shoot(page, "web-view-start-tool.png");

    // Enter in a field submits the form, as a person would after typing the last value.
    await form.locator('input[data-field="ms"]').press("Enter");
    await page.locator("#notice", { hasText: /^Started steps as / }).waitFor();
    const [task] = await fx.app.engine.inspect.search({ scope: { any: true } }, null, 10);
    expect(task).toMatchObject({ name: "steps", owner: "local|alice", request: { name: "steps", arguments: { count: 3, ms: 40 } } });
    // The new task is open at once, and runs to completion under the page's eyes.
    await page.locator("#detail .id", { hasText: task!.id }).waitFor();
    await page.locator(`tr[data-task-id="${task!.id}"][data-status="completed"]`).waitFor();
    expect(page.url()).toContain(`task=${task!.id}`);
  });

  it("shows the timeline of a task interrupted by a drain and re-run by the next start: both runs, why the first ended, each step's run", async () => {
    dir = mkdtempSync(join(tmpdir(), "mcp-tasks-console-"));
    const file = join(dir, "tasks.db");
    const first = await serve(file);
    const started = await webApi(first.url, "/tasks/api/tools/steps/start", ALICE_TOKEN, {
      method: "POST",
      body: JSON.stringify({ arguments: { count: 4, ms: 250 } }),
    });
    const id = (started.json["task"] as { id: string }).id;
    await until("two checkpointed steps", async () => (await first.app.engine.inspect.checkpoints(id)).length >= 2);
    // The server stops mid-run: its drain hands the task back, and the next start on the file re-runs it.
    expect((await first.app.drain(0)).handedBack).toEqual([id]);
    await first.close();
    fx = await serve(file);
    await until("the re-run to complete", async () => (await fx!.app.engine.inspect.task(id))?.status === "completed");

    page = await browser.context.newPage();
    await page.goto(`${new URL(`/tasks?task=${id}`, fx.url).href}#token=${ALICE_TOKEN}`);
    const timeline = page.locator("#detail ol.timeline.full");
    await timeline.locator('li[data-kind="run"][data-run="2"]').waitFor();
    const run = (n: number) => timeline.locator(`li[data-kind="run"][data-run="${n}"]`);
    expect(await run(1).getAttribute("data-ended")).toBe("drained");
    expect(await run(1).locator(".why").textContent()).toMatch(/^ended: handed back by a drain after /);
    expect(await run(2).getAttribute("data-ended")).toBe("finished");
    expect(await run(2).locator("b").textContent()).toBe("run 2 resumed");
    const messages = await timeline.locator('li[data-kind="status"] .why').allTextContents();
    expect(messages).toEqual(expect.arrayContaining([HANDED_BACK_LOCAL_MESSAGE, HANDED_BACK_RERUN_MESSAGE]));
    const steps = await timeline.locator('li[data-kind="step"]').all();
    const stepRuns = await Promise.all(steps.map(async (step) => (await step.locator(".why").textContent())?.match(/run (\d)/)?.[1]));
    expect(stepRuns).toHaveLength(4);
    // The first run stored at least the two steps seen before the drain; the re-run stored the rest.
    expect(stepRuns.slice(0, 2)).toEqual(["1", "1"]);
    expect(stepRuns.at(-1)).toBe("2");
    expect(await steps[0]!.locator(".why").textContent()).toMatch(/^\d+ ms · run 1 · result 1 B$/);
    // Tall enough for the whole panel, timeline included (the panel is at most the window's height).
    await page.setViewportSize({ width: 1480, height: 1500 });
    await shoot(page, "web-view-timeline.png");

    // The API says the same, owner-bound.
    const api = await webApi(fx.url, `/tasks/api/tasks/${id}/timeline`, ALICE_TOKEN);
    expect((api.json["runs"] as Array<{ ended: string }>).map((r) => r.ended)).toEqual(["drained", "finished"]);
  });
});
