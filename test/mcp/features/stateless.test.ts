/**
 * The read-only feature methods as 2026-07-28 stateless requests (no initialize, an envelope per
 * request) over real HTTP: each result with resultType "complete" (X-CAP-9).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveHttp, type HttpHandle } from "../../../src/http/http-server.js";
import { createTaskServer, type TaskServer } from "../../../src/mcp/task-server.js";
import { memoryStore } from "../../../src/store/memory/memory-store.js";
import { statelessResult, statelessRpc } from "../../support/stateless-client.js";
import { registerSampleFeatures } from "./features-fixture.js";

let app: TaskServer;
let http: HttpHandle;
beforeAll(async () => {
  app = registerSampleFeatures(createTaskServer({ name: "features-2026", version: "0.0.0", store: memoryStore(), rateLimit: "off" }));
  http = await serveHttp(app, { port: 0, host: "127.0.0.1" });
});
afterAll(async () => {
  await http.close();
  await app.close();
});

/** X-HTTP-2: Mcp-Name mirrors resources/read's uri and prompts/get's name. */
const named = (value: string) => ({ headers: { "mcp-name": value } });

describe("2026-07-28 stateless feature methods", () => {
  it("declares resources, prompts and completions in server/discover, without listChanged or subscribe", async () => {
    const { capabilities } = (await statelessResult(http.url, "server/discover")) as { capabilities: Record<string, unknown> };
    expect(capabilities).toMatchObject({ tools: {}, resources: {}, prompts: {}, completions: {} });
    expect(capabilities["resources"]).toEqual({});
    expect(capabilities["prompts"]).toEqual({});
  });

  it("answers resources/list with resultType complete and cache hints", async () => {
    const result = await statelessResult(http.url, "resources/list");
    expect(result).toMatchObject({ resultType: "complete", ttlMs: 0, cacheScope: "private" });
    expect((result["resources"] as Array<{ uri: string }>).map((r) => r.uri)).toEqual([
      "memo://readme",
      "memo://logo",
      "users://ada/profile",
    ]);
  });

  it("answers resources/templates/list", async () => {
    const result = await statelessResult(http.url, "resources/templates/list");
    expect(result).toMatchObject({ resultType: "complete", resourceTemplates: [{ uriTemplate: "users://{id}/profile", name: "profile" }] });
  });

  it("reads a resource a template matches", async () => {
    const result = await statelessResult(http.url, "resources/read", { uri: "users://alan/profile" }, named("users://alan/profile"));
    expect(result).toMatchObject({
      resultType: "complete",
      contents: [{ uri: "users://alan/profile", mimeType: "application/json", text: '{"id":"alan"}' }],
    });
  });

  it("answers resources/read of an unknown uri with -32002 in an HTTP 400, the uri in data", async () => {
    const { status, body } = await statelessRpc(http.url, "resources/read", { uri: "memo://nothing" }, named("memo://nothing"));
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: -32002, message: "Resource not found", data: { uri: "memo://nothing" } });
  });

  it("answers prompts/list and prompts/get with resultType complete", async () => {
    const list = await statelessResult(http.url, "prompts/list");
    expect(list).toMatchObject({ resultType: "complete", prompts: [{ name: "greeting" }] });
    const got = await statelessResult(http.url, "prompts/get", { name: "greeting", arguments: { name: "Ada" } }, named("greeting"));
    expect(got).toMatchObject({ resultType: "complete", messages: [{ role: "user", content: { type: "text", text: "Hello Ada" } }] });
  });

  it("answers prompts/get without a required argument with -32602", async () => {
    const { body } = await statelessRpc(http.url, "prompts/get", { name: "greeting", arguments: {} }, named("greeting"));
    expect(body.error?.code).toBe(-32602);
  });

  it("answers completion/complete with resultType complete", async () => {
    const result = await statelessResult(http.url, "completion/complete", {
      ref: { type: "ref/prompt", name: "greeting" },
      argument: { name: "name", value: "Al" },
    });
    expect(result).toEqual({ resultType: "complete", completion: { values: ["Alan"], hasMore: false } });
  });

  it("serves no resources/subscribe: subscriptions are session state (-32601)", async () => {
    const { body } = await statelessRpc(http.url, "resources/subscribe", { uri: "memo://readme" });
    expect(body.error?.code).toBe(-32601);
  });
});
