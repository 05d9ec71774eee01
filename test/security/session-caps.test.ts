/**
 * Local HTTP sessions are capped (T-TTL-7: limit the resources a requestor can hold): each holds
 * an MCP server in memory until it ends or idles out. Over real HTTP with the SDK client.
 */
import { afterEach, describe, expect, it } from "vitest";
import { staticTokenVerifier } from "../../src/http/bearer-auth.js";
import type { HttpOptions } from "../../src/http/http-server.js";
import { callToolAsTask, taskResult } from "../support/conformance.js";
import { rawPost, startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { parseSamples, valueOf } from "../support/prometheus.js";

let fx: HttpServerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const TOKENS = new Map([
  ["tok-alice-77aa", "alice"],
  ["tok-bob-88bb", "bob"],
]);

const initialize = (token?: string) =>
  rawPost(
    fx!.url,
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } },
    },
    token === undefined ? {} : { authorization: `Bearer ${token}` },
  );

async function start(http: HttpOptions): Promise<HttpServerFixture> {
  fx = await startHttpServer({ http });
  return fx;
}

async function rejections(limit: string): Promise<number> {
  return valueOf(parseSamples(await (await fetch(new URL("/metrics", fx!.url))).text()), "mcp_tasks_limit_rejections_total", { limit });
}

describe("T-TTL-7: session caps", () => {
  it("refuses a client's session over its share with 429 and -32600 {name, limit}; other clients still get theirs", async () => {
    await start({ verifier: staticTokenVerifier(TOKENS), maxSessionsPerClient: 2 });
    expect((await initialize("tok-alice-77aa")).status).toBe(200);
    expect((await initialize("tok-alice-77aa")).status).toBe(200);
    const refused = await initialize("tok-alice-77aa");
    expect(refused.status).toBe(429);
    expect(refused.json?.error).toMatchObject({ code: -32600, data: { name: "sessions_per_client", limit: 2 } });
    expect((await initialize("tok-bob-88bb")).status).toBe(200);
    expect(await rejections("sessions_per_client")).toBe(1);
  });

  it("counts clients without auth by address, and gives a place back when a session ends", async () => {
    await start({ maxSessionsPerClient: 1 });
    const first = await fx!.connect({ waitForGetStream: false });
    const { task } = await callToolAsTask(first.client, "sleep", { ms: 5 });
    expect((await initialize()).status).toBe(429);
    await first.transport.terminateSession();
    await first.close();
    const second = await fx!.connect({ waitForGetStream: false });
    // The task outlives the session that created it (tasks are not bound to sessions).
    expect((await taskResult(second.client, task.taskId)).content).toEqual([{ type: "text", text: "slept 5 ms" }]);
  });

  it("refuses any session once the process holds its maximum, with 503 and Retry-After", async () => {
    await start({ verifier: staticTokenVerifier(TOKENS), maxSessions: 1 });
    expect((await initialize("tok-alice-77aa")).status).toBe(200);
    const refused = await initialize("tok-bob-88bb");
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("60");
    expect(refused.json?.error).toMatchObject({ code: -32600, data: { name: "sessions", limit: 1 } });
  });
});
