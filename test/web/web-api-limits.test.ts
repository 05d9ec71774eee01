/**
 * The web view's API within bounds: a body over what it reads is a 413, and its event streams are
 * capped per principal (429) and in all (503 with Retry-After), like HTTP sessions; a closed
 * stream gives its place back. Over real HTTP.
 */
import { afterEach, describe, expect, it } from "vitest";
import { staticTokenVerifier } from "../../src/http/bearer-auth.js";
import { webRoutes, type WebOptions } from "../../src/web/web-routes.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { parseSamples, valueOf } from "../support/prometheus.js";
import { openEventStream, webApi, type EventStreamReader } from "../support/web-client.js";

const ADMIN = "admin-token-limits";
const TOKENS = new Map([
  ["tok-alice-limits", "alice"],
  ["tok-bob-limits", "bob"],
  ["tok-carol-limits", "carol"],
]);

let fx: HttpServerFixture | undefined;
const streams: EventStreamReader[] = [];
afterEach(async () => {
  for (const stream of streams.splice(0)) stream.close();
  await fx?.close();
  fx = undefined;
});

async function start(web: Partial<WebOptions> = {}): Promise<HttpServerFixture> {
  const verifier = staticTokenVerifier(TOKENS);
  fx = await startHttpServer({ http: { verifier }, routes: (app) => webRoutes(app, { adminTokens: [ADMIN], verifier, ...web }) });
  return fx;
}

async function open(token: string): Promise<EventStreamReader> {
  const stream = await openEventStream(fx!.url, token);
  streams.push(stream);
  return stream;
}

/** `GET /tasks/api/events` as one request: its status, headers and, for a refusal, its JSON (an open stream is cancelled). */
async function eventsAnswer(token: string): Promise<{ status: number; headers: Headers; json: unknown }> {
  const response = await fetch(new URL("/tasks/api/events", fx!.url), { headers: { authorization: `Bearer ${token}` } });
  if (response.status === 200) {
    await response.body?.cancel();
    return { status: 200, headers: response.headers, json: undefined };
  }
  return { status: response.status, headers: response.headers, json: await response.json() };
}

async function rejections(limit: string): Promise<number> {
  return valueOf(parseSamples(await (await fetch(new URL("/metrics", fx!.url))).text()), "mcp_tasks_limit_rejections_total", { limit });
}

describe("web API request bodies", () => {
  it("answers 413 with the web API's error shape to a body over 256 KiB", async () => {
    await start();
    const ids = Array.from({ length: 400 }, (_, i) => `${"x".repeat(700)}-${i}`);
    const answer = await webApi(fx!.url, "/tasks/api/cancel", ADMIN, { method: "POST", body: JSON.stringify({ ids }) });
    expect(answer.status).toBe(413);
    expect(answer.json).toEqual({ error: { message: "Request body larger than 262144 bytes" } });
    expect(await rejections("body_bytes")).toBe(1);
  });
});

describe("web view event streams", () => {
  it("refuses a principal's stream over its share with 429; other principals still open theirs", async () => {
    await start({ maxEventStreamsPerViewer: 2 });
    await open("tok-alice-limits");
    await open("tok-alice-limits");
    const refused = await eventsAnswer("tok-alice-limits");
    expect(refused.status).toBe(429);
    expect(refused.json).toEqual({
      error: { message: "Too many event streams for this principal: at most 2; close another page of the web view" },
    });
    await open("tok-bob-limits");
    expect(await rejections("event_streams_per_viewer")).toBe(1);
  });

  it("refuses any stream once the server holds its maximum, with 503 and Retry-After", async () => {
    await start({ maxEventStreams: 2 });
    await open("tok-alice-limits");
    await open("tok-bob-limits");
    const refused = await eventsAnswer("tok-carol-limits");
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("60");
    expect(refused.json).toEqual({ error: { message: "Too many event streams on this server (at most 2); try again later" } });
    expect(await rejections("event_streams")).toBe(1);
  });

  it("gives a closed stream's place back to its principal", async () => {
    await start({ maxEventStreamsPerViewer: 1 });
    const first = await open(ADMIN);
    expect((await eventsAnswer(ADMIN)).status).toBe(429);
    first.close();
    const deadline = Date.now() + 5_000;
    let reopened: EventStreamReader | undefined;
    while (!reopened && Date.now() < deadline) {
      reopened = await open(ADMIN).catch(() => undefined);
      if (!reopened) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(reopened).toBeDefined();
  });

  it("lets each principal hold 20 streams by default", async () => {
    await start();
    for (let i = 0; i < 20; i++) await open("tok-alice-limits");
    expect((await eventsAnswer("tok-alice-limits")).status).toBe(429);
  });
});
