/**
 * `/metrics` stays the same size however many names a caller makes up: a tool or method the
 * server does not serve is labelled `_unknown`, one series for all of them, in both protocol eras
 * (real `mcp-tasks serve`, real HTTP, the SDK client for 2025-11-25 and raw 2026-07-28 requests).
 */
import { randomBytes } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, killAll } from "../support/cli-process.js";
import { parseSamples, type Sample } from "../support/prometheus.js";
import { statelessRpc } from "../support/stateless-client.js";

const OPERATIONS = "mcp_server_operation_duration_seconds";
let url: string;

beforeAll(async () => {
  url = await CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0"]).url();
}, 30_000);

afterAll(async () => {
  await killAll();
});

/** A name nobody registered. */
const madeUp = (): string => `made-up-${randomBytes(6).toString("hex")}`;

/** The whole /metrics page, and its request-duration series (the others move by themselves: store operations of the sweeper, `nodejs_*`). */
async function scrapeOperations(): Promise<{ page: string; samples: Sample[]; bytes: number }> {
  const page = await (await fetch(new URL("/metrics", url))).text();
  const lines = page.split("\n").filter((line) => line.startsWith(`${OPERATIONS}_`));
  return { page, samples: parseSamples(lines.join("\n")), bytes: lines.join("\n").length };
}

/** Sends `rounds` requests naming made-up tools and methods, as one era's client does. */
interface Era {
  name: string;
  sendMadeUp(rounds: number): Promise<void>;
  /** The labels a made-up tool's call and a made-up method's request are counted under. */
  unknownTool: Record<string, string>;
  unknownMethod: Record<string, string> | null;
}

const ERAS: readonly Era[] = [
  {
    name: "2025-11-25",
    async sendMadeUp(rounds) {
      const client = new Client({ name: "made-up-names", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      try {
        for (let i = 0; i < rounds; i++) {
          // A plain call (served on the session's stream) and a task-augmented one (answered as plain JSON).
          for (const task of [undefined, { ttl: 60_000 }]) {
            const refused = await client
              .request({ method: "tools/call", params: { name: madeUp(), arguments: {}, ...(task && { task }) } }, z.object({}).loose())
              .catch((e: unknown) => e);
            expect((refused as McpError).code).toBe(-32602);
          }
          // The SDK refuses a method it has no handler for before anything is traced.
          const unknown = await client.request({ method: madeUp(), params: {} }, z.object({}).loose()).catch((e: unknown) => e);
          expect((unknown as McpError).code).toBe(-32601);
        }
      } finally {
        await client.close();
      }
    },
    unknownTool: { mcp_method_name: "tools/call", gen_ai_tool_name: "_unknown", error_type: "-32602" },
    unknownMethod: null,
  },
  {
    name: "2026-07-28",
    async sendMadeUp(rounds) {
      for (let i = 0; i < rounds; i++) {
        const call = await statelessRpc(url, "tools/call", { name: madeUp(), arguments: {} });
        expect(call.body.error?.code).toBe(-32602);
        const method = madeUp();
        const unknown = await statelessRpc(url, method, {}, { headers: { "mcp-method": method } });
        expect(unknown.body.error?.code).toBe(-32601);
      }
    },
    unknownTool: { mcp_method_name: "tools/call", gen_ai_tool_name: "_unknown", error_type: "-32602" },
    unknownMethod: { mcp_method_name: "_unknown", gen_ai_tool_name: "", error_type: "-32601" },
  },
];

describe.each(ERAS)("/metrics under made-up tool and method names ($name)", { timeout: 60_000 }, (era) => {
  it("keeps the same series, and nearly the same size, after 20 more rounds of made-up names: each counted as _unknown", async () => {
    await era.sendMadeUp(1);
    const before = await scrapeOperations();
    await era.sendMadeUp(20);
    const after = await scrapeOperations();
    expect(after.samples.map((s) => `${s.name}${JSON.stringify(s.labels)}`)).toEqual(
      before.samples.map((s) => `${s.name}${JSON.stringify(s.labels)}`),
    );
    // Only counts and sums moved (a new series is about 2 KB).
    expect(Math.abs(after.bytes - before.bytes)).toBeLessThan(200);
    expect(after.page).not.toContain("made-up-");
    const count = (labels: Record<string, string>): number =>
      after.samples.find((s) => s.name === `${OPERATIONS}_count` && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value ??
      0;
    expect(count(era.unknownTool)).toBeGreaterThanOrEqual(21);
    if (era.unknownMethod) expect(count(era.unknownMethod)).toBeGreaterThanOrEqual(21);
  });
});
