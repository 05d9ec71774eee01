/**
 * An `initialize` POSTed without a session whose params fail its schema is told what is wrong:
 * -32602 "Invalid params for initialize: <field>: <what>" with the request's id in an HTTP 400, on
 * local and shared sessions alike, as the same message gets over stdio (docs/errors.md) — never
 * "initialize first", which is wrong advice for a request that is an initialize. A request that is
 * not an initialize still gets that advice.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawPost, startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";

const valid = { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "m", version: "0" } };

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

describe.each([
  ["local sessions", () => local],
  ["shared sessions", () => shared],
] as const)("without a session, on %s", (_name, server) => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ["no clientInfo", { protocolVersion: "2025-11-25", capabilities: {} }, /^Invalid params for initialize: params\.clientInfo: /],
    ["a numeric protocolVersion", { ...valid, protocolVersion: 20251125 }, /^Invalid params for initialize: params\.protocolVersion: /],
    [
      "a clientInfo.name that is not a string",
      { ...valid, clientInfo: { name: 5, version: "0" } },
      /^Invalid params for initialize: params\.clientInfo\.name: /,
    ],
  ];
  for (const [what, params, message] of cases) {
    it(`an initialize with ${what} gets -32602 naming the field, with its id, HTTP 400`, async () => {
      const response = await rawPost(server().url, { jsonrpc: "2.0", id: 7, method: "initialize", params }, {});
      expect(response.status).toBe(400);
      expect(JSON.parse(response.text)).toEqual({
        jsonrpc: "2.0",
        id: 7,
        error: { code: -32602, message: expect.stringMatching(message) },
      });
    });
  }

  it("a request other than initialize is told to initialize first (-32000, HTTP 400)", async () => {
    const response = await rawPost(server().url, { jsonrpc: "2.0", id: 8, method: "tools/list", params: {} }, {});
    expect(response.status).toBe(400);
    expect(JSON.parse(response.text)).toMatchObject({
      error: { code: -32000, message: "Bad Request: no valid session id; initialize first" },
    });
  });
});
