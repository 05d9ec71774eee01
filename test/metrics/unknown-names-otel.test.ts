/**
 * What OpenTelemetry receives for requests naming tools and methods the server does not serve:
 * the `mcp.server.operation.duration` attributes and the SERVER span names and attributes carry
 * `_unknown`, never the name a caller made up, in both protocol eras; an error code the server does
 * not define is `_OTHER`. Real HTTP server, the metrics SDK registered as the global meter
 * provider (test/support/otel-meter.ts) and an in-memory span exporter as the global tracer's.
 */
import { randomBytes } from "node:crypto";
import { trace } from "@opentelemetry/api";
import { tracing } from "@opentelemetry/sdk-node";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connectHttpClient, startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { installMeter, pointsOf, type InstalledMeter } from "../support/otel-meter.js";
import { statelessRpc } from "../support/stateless-client.js";

const DURATION = "mcp.server.operation.duration";

let meter: InstalledMeter;
let spans: InstanceType<typeof tracing.InMemorySpanExporter>;
let provider: InstanceType<typeof tracing.BasicTracerProvider>;
let fx: HttpServerFixture;

beforeEach(async () => {
  meter = installMeter();
  spans = new tracing.InMemorySpanExporter();
  provider = new tracing.BasicTracerProvider({ spanProcessors: [new tracing.SimpleSpanProcessor(spans)] });
  trace.disable();
  trace.setGlobalTracerProvider(provider);
  fx = await startHttpServer();
  // A tool answering with a JSON-RPC code of its own choosing, as a gateway's upstream may.
  fx.app.tool("odd-code", { input: z.object({}) }, async () => {
    throw new McpError(4242, "a code nobody defined");
  });
});

afterEach(async () => {
  await fx.close();
  await meter.uninstall();
  trace.disable();
  await provider.shutdown();
});

/** A name nobody registered. */
const madeUp = (): string => `made-up-${randomBytes(6).toString("hex")}`;

interface Era {
  name: string;
  /** Calls a made-up tool and a made-up method, and the tool that answers code 4242. */
  send(url: URL): Promise<void>;
}

const ERAS: readonly Era[] = [
  {
    name: "2025-11-25",
    async send(url) {
      const { client, close } = await connectHttpClient(url);
      try {
        for (const task of [undefined, { ttl: 60_000 }]) {
          await client
            .request({ method: "tools/call", params: { name: madeUp(), arguments: {}, ...(task && { task }) } }, z.object({}).loose())
            .catch(() => {});
        }
        await client.request({ method: madeUp(), params: {} }, z.object({}).loose()).catch(() => {});
        await client.request({ method: "tools/call", params: { name: "odd-code", arguments: {} } }, z.object({}).loose()).catch(() => {});
      } finally {
        await close();
      }
    },
  },
  {
    name: "2026-07-28",
    async send(url) {
      await statelessRpc(url, "tools/call", { name: madeUp(), arguments: {} });
      const method = madeUp();
      await statelessRpc(url, method, {}, { headers: { "mcp-method": method } });
      await statelessRpc(url, "tools/call", { name: "odd-code", arguments: {} });
    },
  },
];

describe.each(ERAS)("OpenTelemetry under made-up tool and method names ($name)", (era) => {
  it("records mcp.server.operation.duration with _unknown for the tool and the method, never the names sent", async () => {
    await era.send(fx.url);
    const points = pointsOf(await meter.collect(), DURATION);
    expect(JSON.stringify(points)).not.toContain("made-up-");
    expect(
      pointsOf(points, DURATION, { "mcp.method.name": "tools/call", "gen_ai.tool.name": "_unknown", "error.type": "-32602" }).length,
    ).toBe(1);
  });

  it("names the SERVER spans `tools/call _unknown`, with _unknown in their attributes, never the names sent", async () => {
    await era.send(fx.url);
    const server = spans.getFinishedSpans().filter((span) => span.kind === 1);
    expect(JSON.stringify(server.map((span) => ({ name: span.name, attributes: span.attributes })))).not.toContain("made-up-");
    const unknownTool = server.filter((span) => span.name === "tools/call _unknown");
    expect(unknownTool.length).toBeGreaterThanOrEqual(1);
    expect(unknownTool.every((span) => span.attributes["gen_ai.tool.name"] === "_unknown")).toBe(true);
  });

  it("records an error code the server does not define as error.type _OTHER", async () => {
    await era.send(fx.url);
    const points = pointsOf(await meter.collect(), DURATION, { "gen_ai.tool.name": "odd-code" });
    expect(points.map((point) => point.attributes["error.type"])).toEqual(["_OTHER"]);
  });
});

describe("OpenTelemetry under made-up method names (2026-07-28)", () => {
  it("records a method the server does not serve as mcp.method.name _unknown, its span named _unknown", async () => {
    for (let i = 0; i < 3; i++) {
      const method = madeUp();
      expect((await statelessRpc(fx.url, method, {}, { headers: { "mcp-method": method } })).body.error?.code).toBe(-32601);
    }
    expect(pointsOf(await meter.collect(), DURATION, { "mcp.method.name": "_unknown" })).toMatchObject([
      { count: 3, attributes: { "error.type": "-32601" } },
    ]);
    expect(spans.getFinishedSpans().filter((span) => span.name === "_unknown")).toHaveLength(3);
  });
});
