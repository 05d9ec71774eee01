/**
 * Context out through the gateway (real processes, a real OTLP/HTTP collector): `mcp-tasks
 * gateway --upstream-url` in front of a traced `mcp-tasks serve`. A task created at the gateway
 * with a known `_meta.traceparent` calls the upstream from its execution: the upstream request
 * carries the task's trace context (in `_meta` and the W3C header), so the upstream's own
 * tools/call span is in the task's trace, a child of the gateway's CLIENT span.
 */
import { randomBytes } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, killAll } from "../support/cli-process.js";
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
    const upstream = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0"], { env: receiver.env("http/protobuf", "gw-upstream") });
    const upstreamUrl = await upstream.url();
    const gateway = CliProcess.spawn(["gateway", "--upstream-url", upstreamUrl, "--store", "memory", "--port", "0", "--inline-wait-ms", "0"], {
      env: receiver.env("http/protobuf", "gw-front"),
    });
    const url = await gateway.url();
    const traceId = randomBytes(16).toString("hex");
    const created = await statelessResult(url, "tools/call", { name: "sleep", arguments: { ms: 50 } }, { meta: { ...envelope(), traceparent: `00-${traceId}-${randomBytes(8).toString("hex")}-01` } });
    expect(created["resultType"]).toBe("task");
    await pollTask(url, String(created["taskId"]), isTerminal);

    const execution = await receiver.span((s) => s.resource["service.name"] === "gw-front" && s.name === "execute_tool sleep" && s.traceId === traceId, "the gateway's execution span");
    const outbound = await receiver.span((s) => s.resource["service.name"] === "gw-front" && s.kind === SPAN_KIND.client && s.traceId === traceId, "the gateway's client span");
    expect(outbound).toMatchObject({ name: "tools/call sleep", parentSpanId: execution.spanId });
    const served = await receiver.span((s) => s.resource["service.name"] === "gw-upstream" && s.name === "tools/call sleep" && s.traceId === traceId, "the upstream's tools/call span in the task's trace");
    expect(served.parentSpanId).toBe(outbound.spanId);
  });
});
