/**
 * Webhooks on real `mcp-tasks serve` processes (SQLite file) and a real receiving HTTP server;
 * every delivery verified with the reference implementation (standardwebhooks).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CliProcess, killAll, runCli } from "../support/cli-process.js";
import { callToolAsTask } from "../support/conformance.js";
import { connectHttpClient, type HttpClient } from "../support/http-fixture.js";
import { httpReceiver, type HttpReceiver, type Received } from "../support/http-receiver.js";
import { scrape, valueOf } from "../support/prometheus.js";

const secret = `whsec_${randomBytes(24).toString("base64")}`;
let dir: string;
const clients: HttpClient[] = [];
const receivers: HttpReceiver[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "webhooks-e2e-"));
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await killAll();
  for (const r of receivers.splice(0)) await r.close();
  rmSync(dir, { recursive: true, force: true });
});

async function receiver(): Promise<HttpReceiver> {
  const made = await httpReceiver();
  receivers.push(made);
  return made;
}

function webhooksFile(config: unknown): string {
  const path = join(dir, "webhooks.json");
  writeFileSync(path, JSON.stringify(config));
  return path;
}

async function serve(args: string[]): Promise<{ server: CliProcess; client: HttpClient }> {
  const server = CliProcess.spawn(["serve", "--demo", "--store", `sqlite:${join(dir, "t.db")}`, "--port", "0", ...args], {
    env: { MCP_TASKS_WEBHOOK_SECRET: secret },
  });
  const client = await connectHttpClient(await server.url());
  clients.push(client);
  return { server, client };
}

function verified(request: Received): { type: string; data: Record<string, unknown> } {
  return new Webhook(secret).verify(request.body, {
    "webhook-id": String(request.headers["webhook-id"]),
    "webhook-timestamp": String(request.headers["webhook-timestamp"]),
    "webhook-signature": String(request.headers["webhook-signature"]),
  }) as { type: string; data: Record<string, unknown> };
}

describe("webhooks across real processes", { timeout: 90_000 }, () => {
  it("delivers with --webhook and MCP_TASKS_WEBHOOK_SECRET, and counts it on /metrics", async () => {
    const target = await receiver();
    const { server, client } = await serve(["--webhook", target.url, "--webhook-allow-private", "127.0.0.1"]);
    const created = await callToolAsTask(client.client, "sleep", { ms: 1 });
    const [request] = await target.waitFor(1);
    expect(verified(request!)).toMatchObject({ type: "task.completed", data: { taskId: created.task.taskId } });
    const base = new URL(await server.url());
    let delivered = 0;
    for (let i = 0; i < 40 && delivered < 1; i++) {
      const metrics = await scrape(base);
      delivered = valueOf(metrics, "mcp_tasks_webhook_deliveries_total", { outcome: "delivered", endpoint: "default" });
      if (delivered < 1) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(delivered).toBe(1);
    const text = await (await fetch(new URL("/metrics", base))).text();
    expect(text).toMatch(/mcp_tasks_webhook_queue\{state="pending"\} 0/);
    expect(text).toContain("mcp_tasks_webhook_oldest_pending_seconds 0");
    expect(text).not.toContain(secret);
    expect(server.stderr.items.map((line) => line.raw).join("\n")).not.toContain(secret.slice(6));
  });

  it("after kill -9 with the delivery committed but not acknowledged, the restarted server sends the same webhook-id", async () => {
    const target = await receiver();
    // The first attempt hangs (the process dies before any answer); later ones succeed.
    let calls = 0;
    target.answer((_request, response) => {
      if (++calls > 1) response.writeHead(200).end();
    });
    const file = webhooksFile({
      endpoints: [{ id: "ci", url: target.url, secretEnv: "MCP_TASKS_WEBHOOK_SECRET", allowPrivate: ["127.0.0.1"] }],
      connectTimeoutMs: 1000,
      responseTimeoutMs: 1000,
      firstRetryDelayMs: 100,
    });
    const first = await serve(["--webhooks", file]);
    const created = await callToolAsTask(first.client.client, "sleep", { ms: 1 });
    const [sent] = await target.waitFor(1);
    expect(await first.server.kill("SIGKILL")).toEqual({ code: null, signal: "SIGKILL" });

    const second = await serve(["--webhooks", file]);
    const requests = await target.waitFor(2, 30_000);
    expect(requests[1]!.headers["webhook-id"]).toBe(sent!.headers["webhook-id"]);
    expect(verified(requests[1]!)).toMatchObject({ type: "task.completed", data: { taskId: created.task.taskId } });
    await second.client.close();
  });

  it("refuses a webhook configuration that cannot work before serving (exit 2, the reason named)", async () => {
    const bad = CliProcess.spawn(
      ["serve", "--demo", "--store", `sqlite:${join(dir, "t.db")}`, "--port", "0", "--webhook", "https://hooks.example.com/x"],
      {
        env: { MCP_TASKS_WEBHOOK_SECRET: "" },
      },
    );
    expect((await bad.exited).code).toBe(2);
    expect(bad.stderr.items.map((line) => line.raw).join("\n")).toMatch(/MCP_TASKS_WEBHOOK_SECRET is not set/);
    const file = webhooksFile({ endpoints: [{ url: "ftp://x", secret }] });
    const worse = CliProcess.spawn(["serve", "--demo", "--store", `sqlite:${join(dir, "t.db")}`, "--port", "0", "--webhooks", file]);
    expect((await worse.exited).code).toBe(2);
    expect(worse.stderr.items.map((line) => line.raw).join("\n")).toMatch(/endpoints\.0\.url: must be an http\(s\) URL/);
  });

  it("webhooks listen prints verified events; webhooks list shows deliveries and redeliver --id sends one again", async () => {
    const listen = CliProcess.spawn(["webhooks", "listen", "--port", "0", "--secret", secret]);
    const line = await listen.stderr.waitFor((l) => /listening for webhooks on/.test(l.raw), "listen to start", 20_000);
    const hook = /(http:\/\/\S+)/.exec(line.raw)![1]!;
    const token = "admin-secret-token";
    const { server, client } = await serve(["--webhook", hook, "--webhook-allow-private", "127.0.0.1", "--admin-token", token]);
    const created = await callToolAsTask(client.client, "sleep", { ms: 1 });
    const printed = JSON.parse(await listen.stdoutLines.waitFor(() => true, "an event", 20_000)) as Record<string, unknown>;
    expect(printed).toMatchObject({ type: "task.completed", data: { taskId: created.task.taskId }, id: expect.stringMatching(/^msg_/) });
    const base = new URL(await server.url()).origin;
    let listed = "";
    for (let i = 0; i < 40 && !listed.includes("delivered"); i++) {
      listed = (await runCli(["webhooks", "list", "--server", base, "--admin-token", token])).stdout;
      if (!listed.includes("delivered")) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(listed).toContain(String(printed["id"]));
    expect(listed).toContain("delivered");
    const again = await runCli(["webhooks", "redeliver", "--id", String(printed["id"]), "--server", base, "--admin-token", token]);
    expect(again.stdout.trim()).toBe("queued 1");
    // The same event again: the same line (same webhook-id, same body).
    await listen.stdoutLines.waitFor(() => listen.stdoutLines.items.length >= 2, "the redelivered event", 20_000);
    expect((JSON.parse(listen.stdoutLines.items[1]!) as Record<string, unknown>)["id"]).toBe(printed["id"]);
    const refused = await runCli(["webhooks", "list", "--server", base, "--admin-token", "wrong"]);
    expect(refused.code).toBe(2);
  });
});
