/**
 * The web view's answer form in a real headless Chromium: a yes/no field whose schema gives no
 * default starts unanswered (not as a "No" nobody chose), so submitting it untouched is refused by
 * the server as missing, and the answer sent is the one picked.
 */
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { webRoutes } from "../../src/web/web-routes.js";
import { launchChromium, type Browser } from "../support/browser.js";
import { callToolAsTask } from "../support/conformance.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";

const ADMIN_TOKEN = "admin-token-for-the-answer-form-test";

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

describe("the web view's answer form in headless Chromium", () => {
  it("a yes/no field without a default starts unanswered: submitted untouched it is missing, and the No picked is sent as false", async () => {
    fx = await startHttpServer({ routes: (app) => webRoutes(app, { adminTokens: [ADMIN_TOKEN] }) });
    fx.app.tool("agree", { input: z.object({}), taskSupport: "optional" }, async (_args, ctx) => {
      const answer = await ctx.elicit({
        mode: "form",
        message: "Agree to the terms?",
        requestedSchema: { type: "object", properties: { agree: { type: "boolean", title: "Agree to the terms" } }, required: ["agree"] },
      });
      return { content: [{ type: "text", text: `agree: ${JSON.stringify(answer.content?.["agree"])}` }] };
    });
    page = await browser.context.newPage();
    await page.goto(`${new URL("/tasks", fx.url).href}#token=${ADMIN_TOKEN}`);
    await page.locator('#live[data-state="on"]').waitFor();
    const { client } = await fx.connect();
    const id = (await callToolAsTask(client, "agree", {})).task.taskId;
    await page.locator(`tr[data-task-id="${id}"][data-status="input_required"]`).click();
    const form = page.locator("#detail form.question");
    const field = form.locator('[data-field="agree"]');
    await field.waitFor();
    expect(await field.inputValue()).toBe("");
    await form.locator('button[data-action="answer-accept"]').click();
    await form.locator(".error", { hasText: 'Missing required field "agree"' }).waitFor();
    await field.selectOption({ label: "No" });
    await form.locator('button[data-action="answer-accept"]').click();
    await page.locator(`tr[data-task-id="${id}"][data-status="completed"]`).waitFor();
    expect((await fx.app.engine.store.get(id, { any: true }))?.outcome).toEqual({
      kind: "result",
      value: { content: [{ type: "text", text: "agree: false" }] },
    });
  });
});
