/**
 * The web view's "Emit event" in a real headless Chromium against a real `mcp-tasks serve --demo`
 * process (bearer tokens, an admin token, a SQLite file), in both eras from one table: alice's
 * `approve` task, created through TaskClient in the era, is parked; the operator opens the web view
 * with the admin token and emits its approval for alice; alice's client gets the result.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ProtocolRevision } from "../../src/mcp/requestor/requestor-eras.js";
import { TaskClient } from "../../src/client/task-client.js";
import { launchChromium, type Browser } from "../support/browser.js";
import { CliProcess, killAll } from "../support/cli-process.js";

const ALICE = "tok-alice-web-emit-5a0c";
const ADMIN = "admin-web-emit-e71b";

const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-web-emit-"));
let browser: Browser;
let url: string;
let page: Page | undefined;
let client: TaskClient | undefined;

beforeAll(async () => {
  const tokens = join(dir, "tokens.json");
  writeFileSync(tokens, JSON.stringify({ [ALICE]: "alice" }));
  const server = CliProcess.spawn([
    "serve",
    "--demo",
    "--store",
    `sqlite:${join(dir, "tasks.db")}`,
    "--port",
    "0",
    "--inline-wait-ms",
    "0",
    "--auth-tokens",
    tokens,
    "--admin-token",
    ADMIN,
  ]);
  [url, browser] = await Promise.all([server.url(60_000), launchChromium()]);
}, 90_000);

afterEach(async () => {
  await page?.close();
  page = undefined;
  await client?.close().catch(() => {});
  client = undefined;
});

afterAll(async () => {
  await browser?.close();
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

const ERAS: ProtocolRevision[] = ["2025-11-25", "2026-07-28"];

describe.each(ERAS)("the web view's Emit event on a serve process, the task created under %s", { timeout: 60_000 }, (protocol) => {
  it("an admin emits the approval of alice's parked task from its detail panel, and alice's client gets the result", async () => {
    client = await TaskClient.connect(url, { protocol, token: ALICE });
    const made = await client.callTool("approve", { action: `release ${protocol}` }, { task: true });
    if (made.kind !== "task") throw new Error("expected a task");
    const taskId = made.task.id;

    page = await browser.context.newPage();
    await page.goto(`${new URL("/tasks", url).href}#token=${ADMIN}`);
    await page.locator('#live[data-state="on"]').waitFor();
    const row = page.locator(`tr[data-task-id="${taskId}"]`);
    await row.locator(".wait.parked").waitFor();
    await row.click();
    const form = page.locator("#detail form.emit");
    await form.waitFor();
    expect(await form.locator('[data-field="emit-name"]').inputValue()).toBe(`approval/${taskId}`);
    await form.locator('[data-field="emit-payload"]').fill('{"approved": true, "by": "the operator"}');
    await form.locator('button[data-action="emit"]').click();
    await page.locator("#notice", { hasText: `Emitted approval/${taskId}: woke 1 task.` }).waitFor();

    const result = await made.task.result();
    expect(result).toMatchObject({ content: [{ type: "text", text: `approved by the operator: release ${protocol}` }] });
    expect((await made.task.status()).status).toBe("completed");
  });
});
