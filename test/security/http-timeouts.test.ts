/**
 * The HTTP server's limits on receiving a request: headers and whole requests that arrive too
 * slowly are cut with 408, while responses that take long — SSE streams of both eras and the web
 * view's event stream — are never cut by them. Small limits here, so each test takes a second or two.
 */
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_KEEP_ALIVE_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS } from "../../src/http/http-timeouts.js";
import { webRoutes } from "../../src/web/web-routes.js";
import { callTool, callToolAsTask } from "../support/conformance.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { rawConnection, requestHead, trickle } from "../support/raw-socket.js";
import { envelope, statelessResult, V2026 } from "../support/stateless-client.js";
import { openEventStream } from "../support/web-client.js";

const HEADERS_MS = 300;
const REQUEST_MS = 900;
/** Longer than the request timeout by a margin: what must outlive it. */
const OUTLIVE_MS = REQUEST_MS + 600;
const ADMIN = "admin-token-timeouts";

let fx: HttpServerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function start(): Promise<HttpServerFixture> {
  fx = await startHttpServer({
    http: { headersTimeoutMs: HEADERS_MS, requestTimeoutMs: REQUEST_MS },
    routes: (app) => webRoutes(app, { adminTokens: [ADMIN], feed: { coalesceMs: 5, countsEveryMs: 10 } }),
  });
  return fx;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("receiving a request", () => {
  it("cuts a connection whose request headers do not arrive within headersTimeoutMs, with 408", async () => {
    const { http } = await start();
    const outcome = await rawConnection(http.port, (socket) => {
      socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${http.port}\r\n`);
      trickle(socket, "X-Slow: a\r\n", 50);
    });
    expect(outcome.status).toBe(408);
    expect(outcome.closedAfterMs).toBeGreaterThanOrEqual(HEADERS_MS - 50);
    expect(outcome.closedAfterMs).toBeLessThan(REQUEST_MS);
  });

  it("cuts a connection that sends nothing within headersTimeoutMs", async () => {
    const { http } = await start();
    const outcome = await rawConnection(http.port, () => {});
    expect(outcome.status).toBe(408);
    expect(outcome.closedAfterMs).toBeLessThan(REQUEST_MS);
  });

  it("cuts a request whose body does not arrive within requestTimeoutMs, with 408", async () => {
    const { http } = await start();
    const outcome = await rawConnection(http.port, (socket) => {
      socket.write(requestHead("POST", "/mcp", http.port, { "Content-Type": "application/json", "Content-Length": 10_000 }));
      trickle(socket, " ", 50);
    });
    expect(outcome.status).toBe(408);
    expect(outcome.closedAfterMs).toBeGreaterThanOrEqual(REQUEST_MS - 50);
    expect(outcome.closedAfterMs).toBeLessThan(REQUEST_MS + 1_500);
  });

  it("has defaults of 10 s for headers, 60 s for a whole request and 5 s for an idle keep-alive connection", async () => {
    fx = await startHttpServer();
    expect([DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_KEEP_ALIVE_TIMEOUT_MS]).toEqual([10_000, 60_000, 5_000]);
    expect(fx.http.server.headersTimeout).toBe(DEFAULT_HEADERS_TIMEOUT_MS);
    expect(fx.http.server.requestTimeout).toBe(DEFAULT_REQUEST_TIMEOUT_MS);
    expect(fx.http.server.keepAliveTimeout).toBe(DEFAULT_KEEP_ALIVE_TIMEOUT_MS);
  });

  it("refuses a headers timeout longer than the request timeout", async () => {
    await expect(startHttpServer({ http: { headersTimeoutMs: 2_000, requestTimeoutMs: 1_000 } })).rejects.toThrow(
      /headersTimeoutMs \(2000\) must not exceed requestTimeoutMs \(1000\)/,
    );
  });
});

/** A POST whose answer streams for longer than the request timeout, per era: it ends with the whole answer. */
const LONG_ANSWERS = [
  {
    era: "2025-11-25",
    async answer(server: HttpServerFixture): Promise<unknown> {
      const c = await server.connect({ waitForGetStream: false });
      const result = await callTool(c.client, "sleep", { ms: OUTLIVE_MS });
      const post = c.exchanges.items.find((e) => e.body?.method === "tools/call");
      expect(post?.contentType).toMatch(/text\/event-stream/);
      return result.content;
    },
    expected: [{ type: "text", text: `slept ${OUTLIVE_MS} ms` }],
  },
  {
    era: "2026-07-28",
    async answer(server: HttpServerFixture): Promise<unknown> {
      // subscriptions/listen: an SSE answer that lasts until the task ends.
      const created = await statelessResult(server.url, "tools/call", { name: "sleep", arguments: { ms: OUTLIVE_MS } });
      const response = await fetch(server.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": V2026,
          "mcp-method": "subscriptions/listen",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 9,
          method: "subscriptions/listen",
          params: { _meta: envelope(), notifications: { taskIds: [created["taskId"]] } },
        }),
      });
      expect(response.headers.get("content-type")).toMatch(/text\/event-stream/);
      const events = (await response.text()).split("\n\n").filter((e) => e.includes("data: "));
      const last = JSON.parse(events.at(-1)!.split("data: ")[1]!) as { params?: { status?: string }; result?: unknown };
      const statuses = events.map((e) => (JSON.parse(e.split("data: ")[1]!) as { params?: { status?: string } }).params?.status);
      return { completed: statuses.includes("completed"), result: last.result };
    },
    expected: { completed: true, result: { resultType: "complete", _meta: { "io.modelcontextprotocol/subscriptionId": 9 } } },
  },
] as const;

describe("responses are not cut by the request timeout", () => {
  it.each(LONG_ANSWERS)(
    "$era: a POST answered as SSE for longer than the request timeout gets its whole answer",
    async ({ answer, expected }) => {
      const server = await start();
      const started = Date.now();
      expect(await answer(server)).toEqual(expected);
      expect(Date.now() - started).toBeGreaterThan(REQUEST_MS);
    },
  );

  it("2025-11-25: the session's GET stream open longer than the request timeout still carries notifications", async () => {
    const server = await start();
    const c = await server.connect();
    await sleep(OUTLIVE_MS);
    const created = await callToolAsTask(c.client, "sleep", { ms: 10 });
    const note = await c.received.waitFor(
      (r) =>
        r.message.method === "notifications/tasks/status" &&
        r.message.params?.["taskId"] === created.task.taskId &&
        r.message.params["status"] === "completed",
      "the task's completed status on the GET stream",
    );
    expect(note.exchange.method).toBe("GET");
    expect(c.exchanges.items.filter((e) => e.method === "GET")).toHaveLength(1);
    expect(c.errors).toEqual([]);
  });

  it("the web view's event stream open longer than the request timeout still carries task updates", async () => {
    const server = await start();
    const stream = await openEventStream(server.url, ADMIN);
    try {
      await sleep(OUTLIVE_MS);
      const c = await server.connect({ waitForGetStream: false });
      const created = await callToolAsTask(c.client, "sleep", { ms: 10 });
      await stream.events.waitFor(
        (e) => e.event === "task" && e.data["id"] === created.task.taskId && e.data["status"] === "completed",
        "the task's update on the event stream",
      );
    } finally {
      stream.close();
    }
  });
});
