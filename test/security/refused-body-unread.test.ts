/**
 * A request refused before its body is read (no token, a body over the limit, no such path…)
 * gets its answer and its connection closed: the server never reads the rest of a large body,
 * which an unauthenticated client could otherwise make as long as it likes. Raw sockets sending
 * 50 MiB, on every path that can refuse before reading, in both eras where the path is per era.
 */
import { afterEach, describe, expect, it } from "vitest";
import { staticTokenVerifier } from "../../src/http/bearer-auth.js";
import { webRoutes } from "../../src/web/web-routes.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { bytesReadBy, flood, rawConnection, requestHead, type SocketOutcome } from "../support/raw-socket.js";

const ADMIN = "admin-token-5150";
const TOKENS = new Map([["tok-alice-4242", "alice"]]);
const HUGE = 50 * 1024 * 1024;
/** Far below 50 MiB, above what the server reads before refusing (at most its 1 MiB limit here) plus socket buffers. */
const READ_AT_MOST = 8 * 1024 * 1024;
/** Without the close, a client that sent everything waits for the keep-alive timeout (5 s). */
const CLOSED_WITHIN_MS = 3_000;

let fx: HttpServerFixture | undefined;
let bytesRead: () => number = () => 0;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function start(): Promise<HttpServerFixture> {
  const verifier = staticTokenVerifier(TOKENS);
  fx = await startHttpServer({
    http: { verifier, maxBodyBytes: 1024 * 1024 },
    routes: (app) => webRoutes(app, { adminTokens: [ADMIN], verifier }),
  });
  bytesRead = bytesReadBy(fx.http.server);
  return fx;
}

/** Sends `method path` with 50 MiB of body, declared or chunked, as fast as the server takes it. */
function sendHuge(path: string, headers: Record<string, string>, framing: "declared" | "chunked", method = "POST"): Promise<SocketOutcome> {
  const port = fx!.http.port;
  const length: Record<string, string | number> = framing === "declared" ? { "Content-Length": HUGE } : { "Transfer-Encoding": "chunked" };
  return rawConnection(port, (socket) => {
    socket.write(
      requestHead(method, path, port, {
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
        ...headers,
        ...length,
      }),
    );
    flood(socket, HUGE, framing === "chunked" ? "chunked" : "raw");
  });
}

function expectClosedUnread(outcome: SocketOutcome, status: number): void {
  expect(outcome.status).toBe(status);
  expect(outcome.text).toMatch(/\r\nconnection: close\r\n/i);
  expect(outcome.closedAfterMs).toBeLessThan(CLOSED_WITHIN_MS);
  expect(outcome.bytesWritten).toBeLessThan(HUGE);
  expect(bytesRead()).toBeLessThan(READ_AT_MOST);
}

const ERAS = [
  { era: "2025-11-25", headers: {} },
  { era: "2026-07-28", headers: { "MCP-Protocol-Version": "2026-07-28" } },
] as const;

describe.each(ERAS)("the MCP endpoint, $era", ({ headers }) => {
  it("answers 401 to a request without a token and closes the connection without reading its body", async () => {
    await start();
    expectClosedUnread(await sendHuge("/mcp", headers, "declared"), 401);
  });

  it("answers 401 to a request with an unknown token and closes the connection without reading its chunked body", async () => {
    await start();
    expectClosedUnread(await sendHuge("/mcp", { ...headers, Authorization: "Bearer tok-nobody" }, "chunked"), 401);
  });

  it("answers 413 to a declared body over the limit and closes the connection without reading it", async () => {
    await start();
    expectClosedUnread(await sendHuge("/mcp", { ...headers, Authorization: "Bearer tok-alice-4242" }, "declared"), 413);
  });

  it("answers 413 once a chunked body passes the limit and closes the connection without reading the rest", async () => {
    await start();
    expectClosedUnread(await sendHuge("/mcp", { ...headers, Authorization: "Bearer tok-alice-4242" }, "chunked"), 413);
  });
});

describe("the other paths", () => {
  it("the MCP endpoint answers 405 to a method it does not serve and closes the connection without reading the body", async () => {
    await start();
    expectClosedUnread(await sendHuge("/mcp", { Authorization: "Bearer tok-alice-4242" }, "declared", "PUT"), 405);
  });

  it("a foreign Origin is answered 403 and the connection closed without reading the body", async () => {
    await start();
    expectClosedUnread(await sendHuge("/mcp", { Authorization: "Bearer tok-alice-4242", Origin: "http://evil.example" }, "declared"), 403);
  });

  it("the web API answers 401 to a request without a token and closes the connection without reading its body", async () => {
    await start();
    expectClosedUnread(await sendHuge("/tasks/api/cancel", {}, "chunked"), 401);
  });

  it("the web API answers 413 once a body passes its limit and closes the connection without reading the rest", async () => {
    await start();
    expectClosedUnread(await sendHuge("/tasks/api/cancel", { Authorization: `Bearer ${ADMIN}` }, "chunked"), 413);
  });

  it("an unknown path answers 404 and closes the connection without reading the body", async () => {
    await start();
    expectClosedUnread(await sendHuge("/nowhere", {}, "declared"), 404);
  });

  it("a route's missing method answers 405 and closes the connection without reading the body", async () => {
    await start();
    expectClosedUnread(await sendHuge("/metrics", {}, "declared"), 405);
  });
});

describe("clients keeping their connections", () => {
  it("a keep-alive fetch client sending 50 MiB without a token gets its 401 at once, and its next request is served", async () => {
    await start();
    const started = Date.now();
    const refused = await fetch(fx!.url, { method: "POST", headers: { "content-type": "application/json" }, body: new Uint8Array(HUGE) });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("connection")).toBe("close");
    await refused.text();
    expect(Date.now() - started).toBeLessThan(CLOSED_WITHIN_MS);
    expect(bytesRead()).toBeLessThan(READ_AT_MOST);
    const next = await fetch(new URL("/healthz", fx!.url));
    expect(next.status).toBe(200);
  });

  it("a refusal of a small body keeps the connection open for the client's next request", async () => {
    await start();
    const port = fx!.http.port;
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const outcome = await rawConnection(port, (socket) => {
      socket.write(requestHead("POST", "/mcp", port, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) }));
      // The body after the head has been answered: the server reads it to keep the connection.
      socket.once("data", () => {
        socket.write(body);
        socket.write(requestHead("GET", "/healthz", port, { Connection: "close" }));
      });
    });
    const statuses = [...outcome.text.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => Number(m[1]));
    expect(statuses).toEqual([401, 200]);
  });
});
