/**
 * The web view's workers, leases and queue in cluster mode, on a real
 * cluster: one `serve --workers 0` front with the web view and two `worker` processes (concurrency
 * 2) on a fresh PostgreSQL schema. Five 20 s tasks: four leased (two per worker), one queued — as
 * `GET /tasks/api/cluster` reports them and as headless Chromium shows them; then a worker is
 * SIGKILLed and drops out of the view once its heartbeat is older than its lease.
 * UPDATE_DOCS_SCREENSHOT=1 also writes docs/screenshots/web-view-cluster-1400.png.
 */
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterView } from "../../src/store/cluster-view.js";
import { ARTIFACTS, launchChromium, type Browser } from "../support/browser.js";
import { REPO_ROOT } from "../support/cli-process.js";
import { Cluster } from "../support/cluster.js";
import { callToolAsTask } from "../support/conformance.js";
import { webApi } from "../support/web-client.js";

const ADMIN_TOKEN = "admin-token-for-the-cluster-view";
const LEASE_MS = 3000;

let cluster: Cluster;
let client: Client;
let browser: Browser;
let front: URL;
/** The two workers' ids, as their "worker started" log lines say. */
let workerIds: string[];

beforeAll(async () => {
  cluster = await Cluster.start({
    fronts: 1,
    workers: 2,
    concurrency: 2,
    leaseMs: LEASE_MS,
    logLevel: "info",
    web: true,
    frontArgs: ["--admin-token", ADMIN_TOKEN],
  });
  front = new URL(cluster.urls[0] as string);
  workerIds = cluster.workers.map((w) => String(w.stderr.items.find((l) => l["msg"] === "worker started")?.["workerId"]));
  client = new Client({ name: "cluster-view-test", version: "0.0.0" });
  await client.connect(new StreamableHTTPClientTransport(front));
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await client?.close().catch(() => {});
  await cluster?.stop();
});

type View = ClusterView & { clustered: boolean; now: number };

async function view(): Promise<View> {
  const answer = await webApi(front, "/tasks/api/cluster", ADMIN_TOKEN);
  expect(answer.status).toBe(200);
  return answer.json as unknown as View;
}

describe("the cluster view of workers, leases and queue depth", { timeout: 120_000 }, () => {
  it("lists both workers alive with their concurrency, before any task", async () => {
    const idle = await view();
    expect(idle.clustered).toBe(true);
    expect(idle.workers.map((w) => w.workerId).sort()).toEqual([...workerIds].sort());
    for (const worker of idle.workers) {
      expect(worker).toMatchObject({ concurrency: 2, leaseMs: LEASE_MS, running: 0 });
      expect(worker.startedAt).toBeLessThanOrEqual(worker.heartbeatAt);
      expect(idle.now - worker.heartbeatAt).toBeLessThan(LEASE_MS);
    }
    expect(idle.leases).toEqual([]);
    expect(idle.queueDepth).toBe(0);
  });

  it("shows four leases (two per worker) and one queued task for five tasks, in the API and on the page", async () => {
    const created: string[] = [];
    for (let i = 0; i < 5; i++) created.push((await callToolAsTask(client, "sleep", { ms: 20_000 }, { ttl: 120_000 })).task.taskId);
    await expect.poll(async () => (await view()).leases.length, { timeout: 15_000 }).toBe(4);
    const busy = await view();
    expect(busy.queueDepth).toBe(1);
    expect(busy.workers.map((w) => w.running)).toEqual([2, 2]);
    for (const lease of busy.leases) {
      expect(created).toContain(lease.taskId);
      expect(lease).toMatchObject({ name: "sleep", status: "working", attempts: 1 });
      expect(workerIds).toContain(lease.workerId);
      expect(lease.since).toBeLessThanOrEqual(busy.now);
      expect(lease.expiresAt).toBeGreaterThan(busy.now);
    }

    const page = await browser.context.newPage();
    try {
      await page.setViewportSize({ width: 1400, height: 900 });
      await page.goto(new URL("/tasks", front).href);
      await page.locator("#token").fill(ADMIN_TOKEN);
      await page.locator("#login-form button[type=submit]").click();
      await page.locator('#live[data-state="on"]').waitFor();
      const panel = page.locator("#cluster");
      await panel.waitFor();
      await expect.poll(() => panel.locator("table.workers tbody tr").count(), { timeout: 10_000 }).toBe(2);
      await expect.poll(() => panel.locator("tr.lease").count(), { timeout: 10_000 }).toBe(4);
      expect(await panel.locator(".cluster-head").textContent()).toMatch(/2 alive[\s\S]*4 leases held · 1 queued/);
      for (const id of workerIds) expect(await panel.locator(`table.workers tr[data-worker-id="${id}"] td.running`).innerText()).toBe("2");
      expect(await page.locator('[data-chart="queue"] .big').innerText()).toBe("1");
      // A lease row opens its task in the detail panel.
      const leased = busy.leases[0]!.taskId;
      await panel.locator(`tr.lease[data-task-id="${leased}"]`).click();
      await page.locator("#detail .id", { hasText: leased }).waitFor();
      await page.screenshot({ path: join(ARTIFACTS, "web-view-cluster-1400.png"), fullPage: true });
      if (process.env["UPDATE_DOCS_SCREENSHOT"] === "1")
        await page.screenshot({ path: join(REPO_ROOT, "docs", "screenshots", "web-view-cluster-1400.png"), fullPage: true });
    } finally {
      await page.close();
    }
  });

  it("a SIGKILLed worker leaves the view once its heartbeat is older than its lease; the survivor keeps its leases", async () => {
    const victim = cluster.workers[0]!;
    const victimId = workerIds[0]!;
    const survivorId = workerIds[1]!;
    await victim.kill("SIGKILL");
    const killedAt = Date.now();
    await expect.poll(async () => (await view()).workers.map((w) => w.workerId), { timeout: 15_000, interval: 200 }).toEqual([survivorId]);
    // Not before its lease could have run out: alive is "heartbeat younger than the lease" (it beats every third of it).
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(LEASE_MS / 3);
    // The reaper takes the lost worker's leases (re-queued or failed, by the tool's retry rule).
    await expect
      .poll(async () => (await view()).leases.filter((l) => l.workerId === victimId).length, { timeout: 15_000, interval: 200 })
      .toBe(0);
    const after = await view();
    expect(after.leases.map((l) => l.workerId)).toEqual([survivorId, survivorId]);
    expect(after.workers[0]?.running).toBe(2);
  });
});
