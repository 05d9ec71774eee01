/**
 * Webhooks in cluster mode on real processes: two `mcp-tasks serve --workers 0` fronts and two
 * `mcp-tasks worker` processes on one fresh PostgreSQL schema, all configured with the same
 * `--webhooks` file, delivering to a real receiving HTTP server. Every delivery is verified with
 * the reference implementation (standardwebhooks). Tasks are created through both fronts; one
 * worker is SIGKILLed while it holds tasks, and nothing is lost: each task's terminal event
 * (completed by a worker, or failed by the lease reaper for the killed one) arrives, under one
 * `webhook-id` per event, each id once — but for an attempt the killed worker had in flight, which
 * another process sends again under the same id (at least once).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cluster } from "../support/cluster.js";
import { callToolAsTask, cancelTask } from "../support/conformance.js";
import { connectHttpClient, type HttpClient } from "../support/http-fixture.js";
import { httpReceiver, type HttpReceiver, type Received } from "../support/http-receiver.js";
import { pgQuery } from "../support/postgres.js";

const secret = `whsec_${randomBytes(24).toString("base64")}`;
const LEASE_MS = 1500;
const TASKS = 40;

let dir: string;
let target: HttpReceiver;
let cluster: Cluster;
const clients: HttpClient[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "webhooks-cluster-"));
  target = await httpReceiver();
  const file = join(dir, "webhooks.json");
  writeFileSync(
    file,
    JSON.stringify({
      endpoints: [{ id: "ci", url: target.url, secret, allowPrivate: ["127.0.0.1"] }],
      firstRetryDelayMs: 100,
      maxRetryDelayMs: 500,
      pollIntervalMs: 200,
    }),
  );
  const webhookArgs = ["--webhooks", file];
  cluster = await Cluster.start({
    fronts: 2,
    workers: 2,
    concurrency: 4,
    leaseMs: LEASE_MS,
    frontArgs: webhookArgs,
    workerArgs: webhookArgs,
  });
  for (const url of cluster.urls) clients.push(await connectHttpClient(url));
}, 90_000);

afterAll(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await cluster?.stop();
  await target?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Event {
  id: string;
  type: string;
  data: { taskId: string; status: string; statusMessage?: string };
}

function verified(request: Received): Event {
  const id = String(request.headers["webhook-id"]);
  const event = new Webhook(secret).verify(request.body, {
    "webhook-id": id,
    "webhook-timestamp": String(request.headers["webhook-timestamp"]),
    "webhook-signature": String(request.headers["webhook-signature"]),
  }) as Omit<Event, "id">;
  return { id, ...event };
}

describe("webhooks on a 2-front + 2-worker PostgreSQL cluster", { timeout: 90_000 }, () => {
  it("delivers every task's event once per webhook-id, tasks created through both fronts, a worker SIGKILLed mid-way", async () => {
    const created: string[] = [];
    for (let i = 0; i < TASKS; i++) {
      const { task } = await callToolAsTask(clients[i % 2]!.client, "sleep", { ms: 400 });
      created.push(task.taskId);
    }
    // Kill a worker while it holds tasks: its claims are failed by a front's lease reaper.
    const victim = cluster.workers[0]!;
    await victim.stderr.waitFor((line) => line["msg"] === "claimed task", "the first worker to claim a task", 20_000);
    cluster.workers.splice(0, 1);
    const killedAt = Date.now();
    await victim.kill("SIGKILL");

    const deadline = Date.now() + 60_000;
    const settled = async (): Promise<boolean> => {
      const { rows } = await pgQuery(
        `SELECT (SELECT count(*)::int FROM ${cluster.schema}.tasks WHERE status IN ('working', 'input_required')) AS open,
                (SELECT count(*)::int FROM ${cluster.schema}.webhook_outbox WHERE state <> 'delivered') AS pending`,
      );
      const row = rows[0] as { open: number; pending: number };
      return row.open === 0 && row.pending === 0;
    };
    while (!(await settled())) {
      if (Date.now() > deadline) throw new Error("tasks or deliveries still open after 60 s");
      await new Promise((resolve) => setTimeout(resolve, 200));
    }

    const received = target.received.map((request) => ({ ...verified(request), at: request.at }));
    const firstAt = new Map<string, number>();
    const repeated: string[] = [];
    for (const event of received) {
      if (firstAt.has(event.id)) repeated.push(event.id);
      else firstAt.set(event.id, event.at);
    }
    // Once per id, but for at-least-once's one exception: an attempt the killed worker had sent
    // and not yet recorded when it died is sent again, with its id, once its lease runs out.
    for (const id of repeated) expect(firstAt.get(id)!).toBeLessThanOrEqual(killedAt + 1000);
    const events = received.filter((event, index) => received.findIndex((other) => other.id === event.id) === index);
    expect([...new Set(events.map((event) => event.data.taskId))].sort()).toEqual([...created].sort());
    expect(events).toHaveLength(TASKS);
    const byType = new Map<string, number>();
    for (const event of events) byType.set(event.type, (byType.get(event.type) ?? 0) + 1);
    // The killed worker's tasks ended failed (its lease ran out), the others completed.
    expect(byType.get("task.failed") ?? 0).toBeGreaterThan(0);
    expect((byType.get("task.completed") ?? 0) + (byType.get("task.failed") ?? 0)).toBe(TASKS);
    for (const event of events.filter((e) => e.type === "task.failed")) expect(event.data.statusMessage).toMatch(/lease|worker/i);

    const { rows } = await pgQuery(
      `SELECT count(DISTINCT id)::int AS ids, count(*) FILTER (WHERE state = 'delivered')::int AS delivered FROM ${cluster.schema}.webhook_outbox`,
    );
    expect(rows[0]).toEqual({ ids: TASKS, delivered: TASKS });
  });

  it("delivers the event of a cancel written by a front, which runs no handler and claims what it writes", async () => {
    const { task } = await callToolAsTask(clients[0]!.client, "sleep", { ms: 30_000 });
    const { rows: working } = await waitForRow(
      `SELECT status FROM ${cluster.schema}.tasks WHERE id = $1 AND lease_owner IS NOT NULL`,
      [task.taskId],
      20_000,
    );
    expect(working[0]).toEqual({ status: "working" });
    const cancelledAt = Date.now();
    await cancelTask(clients[1]!.client, task.taskId);
    const deadline = Date.now() + 10_000;
    let events: Event[] = [];
    while (events.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      events = target.received.map(verified).filter((event) => event.data.taskId === task.taskId);
    }
    expect(events.map((event) => event.type)).toEqual(["task.cancelled"]);
    // Sent by a front at once, not after a lease of the row ran out.
    expect(Date.now() - cancelledAt).toBeLessThan(LEASE_MS * 4);
    const { rows } = await pgQuery(`SELECT state FROM ${cluster.schema}.webhook_outbox WHERE task_id = $1`, [task.taskId]);
    expect(rows).toEqual([{ state: "delivered" }]);
  });
});

/** Polls `sql` until it returns a row (or fails after `timeoutMs`). */
async function waitForRow(sql: string, values: unknown[], timeoutMs: number): Promise<{ rows: unknown[] }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await pgQuery(sql, values);
    if (result.rows.length > 0) return result;
    if (Date.now() > deadline) throw new Error(`no row for ${sql} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
