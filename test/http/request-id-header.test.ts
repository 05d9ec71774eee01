/**
 * Every response of the HTTP server carries its request's id in `x-request-id`, once, whichever
 * path wrote its head: a plain JSON answer, the SDK transport's event stream, a JSON-RPC error
 * written before any session, a route of its own, a bodiless refusal. A well-formed id the caller
 * sent is kept. The same in both eras: a 2026-07-28 request is answered without a session.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { statelessRpc } from "../support/stateless-client.js";

let fx: HttpServerFixture;
let sessionId = "";
beforeAll(async () => {
  fx = await startHttpServer();
  const opened = await post(initialize, {});
  sessionId = opened.headers.get("mcp-session-id") ?? "";
  await opened.text();
  await (await post({ jsonrpc: "2.0", method: "notifications/initialized" }, { "mcp-session-id": sessionId })).text();
});
afterAll(() => fx.close());

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};

function post(body: unknown, headers: Record<string, string>): Promise<Response> {
  return fetch(fx.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

/** The response's `x-request-id` values as sent (fetch would join repeated ones with ", "). */
async function requestIds(response: Response): Promise<string[]> {
  await response.body?.cancel();
  return (response.headers.get("x-request-id") ?? "").split(", ").filter((id) => id !== "");
}

const paths: Array<[string, (headers: Record<string, string>) => Promise<Response>]> = [
  ["an initialize answered on the SDK transport's event stream", (headers) => post(initialize, headers)],
  [
    "a tasks/list answered as plain JSON",
    (headers) => post({ jsonrpc: "2.0", id: 2, method: "tasks/list", params: {} }, { "mcp-session-id": sessionId, ...headers }),
  ],
  [
    "the session's GET stream (or its refusal while one is open)",
    (headers) =>
      fetch(fx.url, {
        headers: { accept: "text/event-stream", "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25", ...headers },
      }),
  ],
  [
    "a request of an unknown session refused before any session",
    (headers) => post({ jsonrpc: "2.0", id: 3, method: "tasks/list" }, { "mcp-session-id": "no-such-session", ...headers }),
  ],
  [
    "a body that is not JSON",
    (headers) => fetch(fx.url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: "{" }),
  ],
  ["a method the endpoint does not serve", (headers) => fetch(fx.url, { method: "PUT", headers })],
  ["a path the server does not serve", (headers) => fetch(new URL("/nowhere", fx.url), { headers })],
  ["the liveness route", (headers) => fetch(new URL("/healthz", fx.url), { headers })],
];

describe("x-request-id on every response", () => {
  it.each(paths)("%s carries one fresh id", async (_path, send) => {
    const ids = await requestIds(await send({}));
    expect(ids).toHaveLength(1);
    expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it.each(paths)("%s carries the caller's well-formed id back", async (_path, send) => {
    expect(await requestIds(await send({ "x-request-id": "edge-7.b" }))).toEqual(["edge-7.b"]);
  });

  it.each([
    ["server/discover", {}],
    ["tasks/get of an unknown task (an error answer)", { taskId: "no-such-task" }],
  ])("a 2026-07-28 stateless %s carries one fresh id, or the caller's", async (label, params) => {
    const method = label.split(" ")[0]!;
    const fresh = await statelessRpc(fx.url, method, params);
    expect(fresh.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const kept = await statelessRpc(fx.url, method, params, { headers: { "x-request-id": "edge-9.c" } });
    expect(kept.headers.get("x-request-id")).toBe("edge-9.c");
  });
});
