/**
 * Signed (cluster-style) sessions: each request is served by a server of its own, so a session
 * declares neither listChanged nor subscribe, and still reads, lists and renders.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveHttp, type HttpHandle } from "../../../src/http/http-server.js";
import { createTaskServer, type TaskServer } from "../../../src/mcp/task-server.js";
import { memoryStore } from "../../../src/store/memory/memory-store.js";
import { connectHttpClient, type HttpClient } from "../../support/http-fixture.js";
import { registerSampleFeatures } from "./features-fixture.js";

let app: TaskServer;
let http: HttpHandle;
let connection: HttpClient;
beforeAll(async () => {
  app = registerSampleFeatures(createTaskServer({ name: "features-shared", version: "0.0.0", store: memoryStore() }));
  http = await serveHttp(app, { port: 0, host: "127.0.0.1", sessions: "shared" });
  connection = await connectHttpClient(http.url);
});
afterAll(async () => {
  await connection.close();
  await http.close();
  await app.close();
});

describe("features on shared sessions", () => {
  it("declares resources and prompts without subscribe or listChanged", async () => {
    const capabilities = connection.client.getServerCapabilities();
    expect(capabilities?.resources).toEqual({});
    expect(capabilities?.prompts).toEqual({});
    expect(capabilities?.tools).toEqual({});
  });

  it("reads a resource and renders a prompt", async () => {
    expect((await connection.client.readResource({ uri: "memo://readme" })).contents).toEqual([
      { uri: "memo://readme", mimeType: "text/plain", text: "hello" },
    ]);
    expect((await connection.client.getPrompt({ name: "greeting", arguments: { name: "Ada" } })).messages).toHaveLength(1);
  });

  it("answers resources/subscribe with -32601", async () => {
    await expect(connection.client.subscribeResource({ uri: "memo://readme" })).rejects.toMatchObject({ code: -32601 });
  });
});
