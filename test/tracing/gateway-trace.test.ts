/**
 * Context out through the gateway (real processes, a real OTLP/HTTP collector): `mcp-tasks
 * gateway --upstream-url` in front of a traced `mcp-tasks serve`. A task created at the gateway
 * with a known `_meta.traceparent` calls the upstream from its execution: the upstream request
 * carries the task's trace context (in `_meta` and the W3C header), so the upstream's own
 * tools/call span is in the task's trace, a child of the gateway's CLIENT span. Over stdio, in
 * front of the real `@modelcontextprotocol/server-everything` (which exports no spans), the
 * request that server was sent is read through a stdio tap, in both eras of the gateway's front.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { EVERYTHING, nodeCommand } from "../gateway/gateway-fixture.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, killAll, REPO_ROOT } from "../support/cli-process.js";
import { OtlpReceiver } from "../support/otlp/otlp-receiver.js";
import { SPAN_KIND } from "../support/otlp/received.js";
import { envelope, isTerminal, pollTask, statelessResult } from "../support/stateless-client.js";

let receiver: OtlpReceiver;

beforeAll(async () => {
  receiver = await OtlpReceiver.start();
});

afterEach(async () => {
  await killAll();
});

afterAll(async () => {
  await receiver?.close();
});

describe("the gateway carries the task's trace to its upstream", { timeout: 90_000 }, () => {
  it("a task created at the gateway under a known trace: the upstream's tools/call span is in that trace, a child of the gateway's client span", async () => {
    const upstream = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0"], {
      env: receiver.env("http/protobuf", "gw-upstream"),
    });
    const upstreamUrl = await upstream.url();
    const gateway = CliProcess.spawn(
      ["gateway", "--upstream-url", upstreamUrl, "--store", "memory", "--port", "0", "--inline-wait-ms", "0"],
      {
        env: receiver.env("http/protobuf", "gw-front"),
      },
    );
    const url = await gateway.url();
    const traceId = randomBytes(16).toString("hex");
    const created = await statelessResult(
      url,
      "tools/call",
      { name: "sleep", arguments: { ms: 50 } },
      { meta: { ...envelope(), traceparent: `00-${traceId}-${randomBytes(8).toString("hex")}-01` } },
    );
    expect(created["resultType"]).toBe("task");
    await pollTask(url, String(created["taskId"]), isTerminal);

    const execution = await receiver.span(
      (s) => s.resource["service.name"] === "gw-front" && s.name === "execute_tool sleep" && s.traceId === traceId,
      "the gateway's execution span",
    );
    const outbound = await receiver.span(
      (s) => s.resource["service.name"] === "gw-front" && s.kind === SPAN_KIND.client && s.traceId === traceId,
      "the gateway's client span",
    );
    expect(outbound).toMatchObject({ name: "tools/call sleep", parentSpanId: execution.spanId });
    const served = await receiver.span(
      (s) => s.resource["service.name"] === "gw-upstream" && s.name === "tools/call sleep" && s.traceId === traceId,
      "the upstream's tools/call span in the task's trace",
    );
    expect(served.parentSpanId).toBe(outbound.spanId);
  });
});

const TAP = join(REPO_ROOT, "test/support/stdio-tap.mjs");

interface FrontEra {
  name: string;
  /** Calls server-everything's `echo` as a task at the gateway under `traceparent`, and reads its result. */
  run(url: string, traceparent: string): Promise<void>;
}

const FRONT_ERAS: FrontEra[] = [
  {
    name: "2025-11-25",
    async run(url, traceparent) {
      const client = new Client({ name: "trace-test", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      try {
        const created = await client.request(
          { method: "tools/call", params: { name: "echo", arguments: { message: "traced" }, task: {}, _meta: { traceparent } } },
          CreateTaskResultSchema,
        );
        const result = await client.request({ method: "tasks/result", params: { taskId: created.task.taskId } }, CallToolResultSchema);
        expect(result.content).toEqual([{ type: "text", text: "Echo: traced" }]);
      } finally {
        await client.close();
      }
    },
  },
  {
    name: "2026-07-28",
    async run(url, traceparent) {
      const created = await statelessResult(
        url,
        "tools/call",
        { name: "echo", arguments: { message: "traced" } },
        { meta: { ...envelope(), traceparent } },
      );
      expect(created["resultType"]).toBe("task");
      const done = await pollTask(url, String(created["taskId"]), isTerminal);
      expect(done).toMatchObject({ status: "completed", result: { content: [{ type: "text", text: "Echo: traced" }] } });
    },
  },
];

/** The JSON-RPC messages written to the tapped server's stdin. */
function tapped(log: string): Array<{ method?: string; params?: { name?: string; _meta?: Record<string, unknown> } }> {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as { method?: string; params?: { name?: string; _meta?: Record<string, unknown> } });
}

describe.each(FRONT_ERAS)("the gateway over stdio in front of server-everything, called under $name", { timeout: 90_000 }, (era) => {
  it("the tools/call server-everything receives carries the task's trace in _meta.traceparent, its parent the gateway's client span", async () => {
    const log = join(mkdtempSync(join(tmpdir(), "mcp-tasks-tap-")), "upstream-stdin.jsonl");
    const service = `gw-stdio-${era.name}`;
    const gateway = CliProcess.spawn(
      [
        "gateway",
        "--upstream-stdio",
        nodeCommand(TAP, log, process.execPath, EVERYTHING, "stdio"),
        "--store",
        "memory",
        "--port",
        "0",
        "--inline-wait-ms",
        "0",
      ],
      {
        env: receiver.env("http/protobuf", service),
      },
    );
    const url = await gateway.url();
    const traceId = randomBytes(16).toString("hex");
    await era.run(url, `00-${traceId}-${randomBytes(8).toString("hex")}-01`);

    const outbound = await receiver.span(
      (s) => s.resource["service.name"] === service && s.kind === SPAN_KIND.client && s.traceId === traceId,
      "the gateway's client span",
    );
    expect(outbound.name).toBe("tools/call echo");
    const call = tapped(log).find((m) => m.method === "tools/call" && m.params?.name === "echo");
    expect(call?.params?._meta?.["traceparent"]).toMatch(new RegExp(`^00-${traceId}-${outbound.spanId}-01$`));
  });
});
