/**
 * A delivery's `traceparent` (docs/webhooks.md, "The payload"): a task created under a caller's
 * trace (`_meta.traceparent`, SEP-414) has its webhook deliveries carry that trace with a span id
 * of the delivery's own, so the receiver's work joins the task's trace; on a traced server a task
 * created without one has the trace its creating request started; a server that traces nothing
 * sends no `traceparent`. Real `mcp-tasks serve` processes (OpenTelemetry exporting to a real OTLP
 * endpoint, or no OpenTelemetry at all), a real receiving HTTP server, every delivery verified with the reference
 * implementation (standardwebhooks). Both eras, from one table of cases.
 */
import { randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, killAll } from "../support/cli-process.js";
import { httpReceiver, type HttpReceiver, type Received } from "../support/http-receiver.js";
import { OtlpReceiver } from "../support/otlp/otlp-receiver.js";
import { envelope, statelessResult } from "../support/stateless-client.js";

const secret = `whsec_${randomBytes(24).toString("base64")}`;
let otlp: OtlpReceiver;
let target: HttpReceiver;

beforeAll(async () => {
  otlp = await OtlpReceiver.start();
});
afterEach(async () => {
  await killAll();
  await target?.close();
});
afterAll(async () => {
  await otlp?.close();
});

/** A server delivering to a fresh receiver; traced (exporting to the OTLP endpoint as `service`) unless `service` is null. */
async function serve(service: string | null): Promise<URL> {
  await target?.close();
  target = await httpReceiver();
  const server = CliProcess.spawn(
    [
      "serve",
      "--demo",
      "--store",
      "memory",
      "--port",
      "0",
      "--inline-wait-ms",
      "0",
      "--webhook",
      target.url,
      "--webhook-allow-private",
      "127.0.0.1",
    ],
    { env: { ...(service !== null && otlp.env("http/json", service)), MCP_TASKS_WEBHOOK_SECRET: secret } },
  );
  return new URL(await server.url());
}

/** The delivery for `taskId`, verified with the reference implementation. */
async function deliveryOf(taskId: string): Promise<Received> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    for (const request of target.received) {
      const event = new Webhook(secret).verify(request.body, {
        "webhook-id": String(request.headers["webhook-id"]),
        "webhook-timestamp": String(request.headers["webhook-timestamp"]),
        "webhook-signature": String(request.headers["webhook-signature"]),
      }) as { data: { taskId: string } };
      if (event.data.taskId === taskId) return request;
    }
    if (Date.now() > deadline) throw new Error(`no delivery for ${taskId}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface Era {
  name: string;
  /** Creates a short `sleep` task, with `_meta.traceparent` when `traceparent` is given; returns its id. */
  create(url: URL, traceparent?: string): Promise<string>;
}

const ERAS: Era[] = [
  {
    name: "2025-11-25",
    async create(url, traceparent) {
      const client = new Client({ name: "webhook-trace-test", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(url));
      try {
        const created = await client.request(
          {
            method: "tools/call",
            params: {
              name: "sleep",
              arguments: { ms: 20 },
              task: { ttl: 60_000 },
              ...(traceparent !== undefined && { _meta: { traceparent } }),
            },
          },
          CreateTaskResultSchema,
        );
        return created.task.taskId;
      } finally {
        await client.close();
      }
    },
  },
  {
    name: "2026-07-28",
    async create(url, traceparent) {
      const meta = { ...envelope(), ...(traceparent !== undefined && { traceparent }) };
      const created = await statelessResult(url, "tools/call", { name: "sleep", arguments: { ms: 20 } }, { meta });
      expect(created["resultType"]).toBe("task");
      return String(created["taskId"]);
    },
  },
];

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

describe.each(ERAS)("a webhook delivery's traceparent under $name", { timeout: 60_000 }, (era) => {
  it("carries the task's trace with a span id of its own: the caller's trace, or the one its creation started", async () => {
    const service = `webhook-trace-${era.name}`;
    const url = await serve(service);
    const traceId = randomBytes(16).toString("hex");
    const callerSpan = randomBytes(8).toString("hex");
    const traced = await era.create(url, `00-${traceId}-${callerSpan}-01`);
    const untraced = await era.create(url);

    const header = String((await deliveryOf(traced)).headers["traceparent"]);
    const match = TRACEPARENT.exec(header);
    expect(match, header).not.toBeNull();
    expect(match![1]).toBe(traceId);
    // Not the caller's span, nor the task's root span (the creating tools/call): the delivery's own.
    const root = await otlp.span((s) => s.traceId === traceId && s.name === "tools/call sleep", "the task's root span");
    expect(match![2]).not.toBe(callerSpan);
    expect(match![2]).not.toBe(root.spanId);

    const own = TRACEPARENT.exec(String((await deliveryOf(untraced)).headers["traceparent"]));
    const ownRoot = await otlp.span(
      (s) => s.resource["service.name"] === service && s.name === "tools/call sleep" && s.attributes["mcp.task.id"] === untraced,
      "the untraced task's root span",
    );
    expect(own?.[1]).toBe(ownRoot.traceId);
    expect(own?.[2]).not.toBe(ownRoot.spanId);
  });

  it("sends no traceparent from a server that traces nothing, even for a creation that named one", async () => {
    const url = await serve(null);
    const taskId = await era.create(url, `00-${randomBytes(16).toString("hex")}-${randomBytes(8).toString("hex")}-01`);
    expect((await deliveryOf(taskId)).headers).not.toHaveProperty("traceparent");
  });
});
