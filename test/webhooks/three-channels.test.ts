/**
 * The comparison of docs/webhooks.md ("Webhooks beside the requestor's own channels"), checked on
 * one task per era over real HTTP, from one table of cases: the webhook, the era's live channel
 * (`notifications/tasks/status` on the 2025-11-25 session; `subscriptions/listen` in 2026-07-28)
 * and the requestor's own read (`tasks/result` in 2025-11-25; `tasks/get`, the result inline once
 * terminal, in 2026-07-28) report the same transition from the same write — the same status and
 * `lastUpdatedAt` — and carry the result as the table says. Every delivery is verified with the
 * reference implementation (standardwebhooks).
 */
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import type { WebhooksInput } from "../../src/runtime/webhooks/webhook-config.js";
import { callToolAsTask, taskResult, watchStatuses } from "../support/conformance.js";
import { httpReceiver, type HttpReceiver } from "../support/http-receiver.js";
import { inMemoryFixture } from "../support/in-memory-fixture.js";
import { envelope, pollTask, statelessResult, isTerminal, V2026 } from "../support/stateless-client.js";
import { startTasksExtServer } from "../support/tasks-ext-server.js";

const secret = `whsec_${randomBytes(24).toString("base64")}`;
const open: Array<{ close(): Promise<void> | void }> = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await thing.close();
});

/** What the live channel said about the task: every status, and its terminal report. */
interface Live {
  statuses: string[];
  terminal: Record<string, unknown>;
}

interface Era {
  name: string;
  /** The live channel's name, as the docs' table gives it. */
  channel: string;
  /** Whether the live channel's terminal report carries the result (the docs' "carries the result" row). */
  liveCarriesResult: boolean;
  /** Starts a server with `webhooks`, creates a task that completes with a result; returns what the requestor saw. */
  run(webhooks: WebhooksInput): Promise<{ taskId: string; live: Live; asked: unknown }>;
}

const ERAS: Era[] = [
  {
    name: "2025-11-25",
    channel: "notifications/tasks/status",
    liveCarriesResult: false,
    async run(webhooks) {
      const fixture = await inMemoryFixture({ webhooks });
      open.push(fixture);
      const statuses = watchStatuses(fixture.client);
      const { task } = await callToolAsTask(fixture.client, "sleep", { ms: 200 }, { ttl: 60_000 });
      const terminal = (await statuses.until(task.taskId, "completed")) as unknown as Record<string, unknown>;
      const asked = await taskResult(fixture.client, task.taskId);
      return { taskId: task.taskId, live: { statuses: statuses.statuses(task.taskId), terminal }, asked: asked.content };
    },
  },
  {
    name: "2026-07-28",
    channel: "subscriptions/listen",
    liveCarriesResult: true,
    async run(webhooks) {
      const server = await startTasksExtServer({ app: { webhooks } });
      open.push(server);
      const created = await statelessResult(server.url, "tools/call", { name: "slow_compute", arguments: { seconds: 1, label: "x" } });
      const taskId = String(created["taskId"]);
      const notes = await listen(server.url, taskId);
      const terminal = notes.find((n) => isTerminal(n))!;
      const asked = await pollTask(server.url, taskId, isTerminal);
      return {
        taskId,
        live: { statuses: notes.map((n) => String(n["status"])), terminal },
        asked: (asked["result"] as { content: unknown }).content,
      };
    },
  },
];

/** The `notifications/tasks` params of a `subscriptions/listen` stream for `taskId`, until the server ends it. */
async function listen(url: URL | string, taskId: string): Promise<Array<Record<string, unknown>>> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": V2026,
      "mcp-method": "subscriptions/listen",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "subscriptions/listen",
      params: { _meta: envelope(), notifications: { taskIds: [taskId] } },
    }),
  });
  const text = await response.text();
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => JSON.parse(line.slice(6)) as { method?: string; params?: Record<string, unknown> })
    .filter((message) => message.method === "notifications/tasks")
    .map((message) => message.params!);
}

async function receiver(): Promise<HttpReceiver> {
  const made = await httpReceiver();
  open.push(made);
  return made;
}

describe.each(ERAS)("the webhook beside $channel and the requestor's read ($name)", { timeout: 30_000 }, (era) => {
  it("reports the same transition from the same write; the result in the webhook when asked for, in the read, and in the live channel as documented", async () => {
    const target = await receiver();
    const { taskId, live, asked } = await era.run({
      endpoints: [{ id: "ci", url: target.url, secret, allowPrivate: ["127.0.0.1"], includeResult: true }],
      pollIntervalMs: 50,
    });
    const deadline = Date.now() + 10_000;
    while (target.received.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
    const events = target.received.map(
      (request) =>
        new Webhook(secret).verify(request.body, {
          "webhook-id": String(request.headers["webhook-id"]),
          "webhook-timestamp": String(request.headers["webhook-timestamp"]),
          "webhook-signature": String(request.headers["webhook-signature"]),
        }) as { type: string; data: Record<string, unknown> },
    );
    const ofTask = events.filter((event) => event.data["taskId"] === taskId);

    // The same transitions: the webhook has an event for each the live channel reported, `working` aside.
    expect(ofTask.map((event) => event.data["status"])).toEqual(live.statuses.filter((status) => status !== "working"));
    const [completed] = ofTask;
    expect(completed).toMatchObject({ type: "task.completed", data: { status: "completed" } });
    // From the same write: the live channel's terminal report and the webhook name the same moment.
    expect(completed!.data["lastUpdatedAt"]).toBe(live.terminal["lastUpdatedAt"]);
    // The result: the requestor's read carries it; the webhook when its endpoint asks (includeResult); the live channel as the docs say.
    expect((completed!.data["result"] as { content: unknown }).content).toEqual(asked);
    expect("result" in live.terminal).toBe(era.liveCarriesResult);
  });
});
