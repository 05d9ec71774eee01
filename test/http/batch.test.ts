/**
 * A JSON-RPC batch (an array body; batching left MCP in 2025-06-18) gets one well-formed error,
 * -32600 with id null in an HTTP 400, on every path of the endpoint — the empty array included —
 * before any message of it is looked at.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawPost, startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { envelope, V2026 } from "../support/stateless-client.js";

const tasksGet = { jsonrpc: "2.0", id: 1, method: "tasks/get", params: { taskId: "t" } };
const toolsList = { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} };
const initialize = { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "b", version: "0" } } };

let local: HttpServerFixture;
let shared: HttpServerFixture;

beforeAll(async () => {
  local = await startHttpServer();
  shared = await startHttpServer({ http: { sessions: "shared" } });
});
afterAll(async () => {
  await local.close();
  await shared.close();
});

async function expectOneBatchError(url: URL, body: unknown[], headers: Record<string, string>): Promise<void> {
  const response = await rawPost(url, body, headers);
  expect(response.status).toBe(400);
  expect(response.contentType).toMatch(/^application\/json/);
  expect(JSON.parse(response.text)).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringMatching(/batch/) } });
}

describe("a JSON-RPC batch is refused as a whole with one -32600", () => {
  const bodies: Array<[string, (message: object) => unknown[]]> = [
    ["the empty array", () => []],
    ["an array of one request", (message) => [message]],
  ];

  for (const [what, bodyOf] of bodies) {
    it(`${what}, without a session (where initialize is expected)`, async () => {
      await expectOneBatchError(local.url, bodyOf(initialize), {});
    });

    it(`${what}, on a local session`, async () => {
      const c = await local.connect();
      await expectOneBatchError(local.url, bodyOf(toolsList), c.headers());
    });

    it(`${what} of a plain-JSON method (tasks/get), on a local session`, async () => {
      const c = await local.connect();
      await expectOneBatchError(local.url, bodyOf(tasksGet), c.headers());
    });

    it(`${what}, on a shared session`, async () => {
      const c = await shared.connect();
      await expectOneBatchError(shared.url, bodyOf(toolsList), c.headers());
    });

    it(`${what}, on the stateless 2026-07-28 path`, async () => {
      const message = { ...toolsList, params: { _meta: envelope() } };
      await expectOneBatchError(local.url, bodyOf(message), { "mcp-protocol-version": V2026, "mcp-method": "tools/list" });
    });
  }

  it("keeps answering a single message on the same session afterwards", async () => {
    const c = await local.connect();
    await expectOneBatchError(local.url, [], c.headers());
    const tools = await c.client.listTools();
    expect(tools.tools.length).toBeGreaterThan(0);
  });
});
