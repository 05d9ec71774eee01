/**
 * Valid JSON that is no JSON-RPC message of MCP gets -32600 (Invalid Request) in an HTTP 400,
 * never -32700, which JSON-RPC 2.0 §5.1 keeps for text that is not JSON: on every path of the
 * endpoint, in both eras, with the request's id echoed when it could be read. A batch (an array
 * body; batching left MCP in 2025-06-18) is one of them, refused as a whole before any message
 * of it is looked at, the empty array included. The session and the server go on serving.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawPost, startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { envelope, V2026 } from "../support/stateless-client.js";

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

interface Case {
  what: string;
  body: (method: string, params: Record<string, unknown>) => unknown;
  message: RegExp;
  id: string | number | null;
}

const cases: Case[] = [
  {
    what: "params null",
    body: (method) => ({ jsonrpc: "2.0", id: 7, method, params: null }),
    message: /"params" must be an object/,
    id: 7,
  },
  {
    what: "params a number",
    body: (method) => ({ jsonrpc: "2.0", id: "s-7", method, params: 5 }),
    message: /"params" must be an object/,
    id: "s-7",
  },
  {
    what: "params by position (an array)",
    body: (method) => ({ jsonrpc: "2.0", id: 7, method, params: [1] }),
    message: /passes parameters by name/,
    id: 7,
  },
  {
    what: 'a "jsonrpc" other than "2.0"',
    body: (method, params) => ({ jsonrpc: "1.0", id: 7, method, params }),
    message: /"jsonrpc" must be "2.0"/,
    id: 7,
  },
  {
    what: "a null id",
    body: (method, params) => ({ jsonrpc: "2.0", id: null, method, params }),
    message: /"id" must be a string or a number/,
    id: null,
  },
  {
    what: "a method that is not a string",
    body: (_method, params) => ({ jsonrpc: "2.0", id: 7, method: 42, params }),
    message: /"method" must be a string/,
    id: 7,
  },
  { what: "a JSON value that is not an object", body: () => 42, message: /not a JSON-RPC message/, id: null },
  { what: "JSON null", body: () => null, message: /not a JSON-RPC message/, id: null },
  { what: "a batch: the empty array", body: () => [], message: /batches are not supported; send one message per request/, id: null },
  {
    what: "a batch: an array of one request",
    body: (method, params) => [{ jsonrpc: "2.0", id: 7, method, params }],
    message: /batches are not supported/,
    id: null,
  },
  {
    what: "neither a method nor a result",
    body: () => ({ jsonrpc: "2.0", id: 7 }),
    message: /"method", or an "id" with a "result" or an "error"/,
    id: 7,
  },
];

async function expectInvalidRequest(url: URL, body: unknown, headers: Record<string, string>, c: Case): Promise<void> {
  const response = await rawPost(url, JSON.stringify(body), headers);
  expect(response.status).toBe(400);
  expect(response.contentType).toMatch(/^application\/json/);
  expect(JSON.parse(response.text)).toEqual({
    jsonrpc: "2.0",
    id: c.id,
    error: { code: -32600, message: expect.stringMatching(c.message) },
  });
}

describe("a body that is JSON but no JSON-RPC message of MCP is an Invalid Request (-32600), not a Parse error", () => {
  for (const c of cases) {
    it(`${c.what}, without a session (where initialize is expected)`, async () => {
      const params = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "m", version: "0" } };
      await expectInvalidRequest(local.url, c.body("initialize", params), {}, c);
    });

    it(`${c.what}, on a local session`, async () => {
      const session = await local.connect();
      await expectInvalidRequest(local.url, c.body("tools/list", {}), session.headers(), c);
    });

    it(`${c.what}, of a plain-JSON method (tasks/get), on a local session`, async () => {
      const session = await local.connect();
      await expectInvalidRequest(local.url, c.body("tasks/get", { taskId: "t" }), session.headers(), c);
    });

    it(`${c.what}, on a shared session`, async () => {
      const session = await shared.connect();
      await expectInvalidRequest(shared.url, c.body("tools/list", {}), session.headers(), c);
    });

    it(`${c.what}, on the stateless 2026-07-28 path`, async () => {
      await expectInvalidRequest(
        local.url,
        c.body("tools/list", { _meta: envelope() }),
        { "mcp-protocol-version": V2026, "mcp-method": "tools/list" },
        c,
      );
    });
  }

  it("a response to nothing on the stateless 2026-07-28 path, whose server asks its client nothing", async () => {
    const response = await rawPost(local.url, JSON.stringify({ jsonrpc: "2.0", id: 7, result: {} }), { "mcp-protocol-version": V2026 });
    expect(response.status).toBe(400);
    expect(JSON.parse(response.text)).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: { code: -32600, message: expect.stringMatching(/expected a request or a notification/) },
    });
  });

  it("text that is not JSON is still a Parse error (-32700), with id null", async () => {
    const session = await local.connect();
    const response = await rawPost(local.url, '{"jsonrpc": "2.0", "id": 8, "method": ', session.headers());
    expect(response.status).toBe(400);
    expect(JSON.parse(response.text)).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
  });

  it("keeps answering well-formed requests on the same session afterwards", async () => {
    const session = await local.connect();
    await expectInvalidRequest(local.url, cases[0]!.body("tools/list", {}), session.headers(), cases[0]!);
    const tools = await session.client.listTools();
    expect(tools.tools.length).toBeGreaterThan(0);
  });
});
