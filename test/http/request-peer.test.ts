/**
 * Each HTTP request's peer reaches the code that answers it (T-SEC-4 limits, T-SEC-5 audit
 * lines), whichever path serves it: the plain-JSON answer, or the session's SDK transport, whose
 * handlers are told only headers. Behind one trusted proxy the peer is the `X-Forwarded-For`
 * entry it appended, so one session's requests can come from different peers.
 */
import { Writable } from "node:stream";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/cli/logger.js";
import { rawPost, startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";

let fx: HttpServerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

function capture(): { stream: Writable; lines(): Record<string, unknown>[] } {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      raw.push(
        ...chunk
          .toString("utf8")
          .split("\n")
          .filter((line) => line !== ""),
      );
      done();
    },
  });
  return { stream, lines: () => raw.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

/** A session opened over raw HTTP, without the standalone GET stream (so tasks/result goes to the transport). */
async function openSession(url: URL): Promise<(body: object, peer: string) => ReturnType<typeof rawPost>> {
  const init = await rawPost(url, {
    jsonrpc: "2.0",
    id: 0,
    method: "initialize",
    params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "peer-test", version: "0" } },
  });
  const sessionId = init.headers.get("mcp-session-id");
  expect(sessionId).toBeTruthy();
  const headers = { "mcp-session-id": sessionId!, "mcp-protocol-version": LATEST_PROTOCOL_VERSION };
  await rawPost(url, { jsonrpc: "2.0", method: "notifications/initialized" }, headers);
  return (body, peer) => rawPost(url, { jsonrpc: "2.0", ...body }, { ...headers, "x-forwarded-for": peer });
}

async function createSleep(post: Awaited<ReturnType<typeof openSession>>, id: number, peer: string, ms: number): Promise<string> {
  const created = await post({ id, method: "tools/call", params: { name: "sleep", arguments: { ms }, task: { ttl: 60_000 } } }, peer);
  const result = created.json as { result?: { task?: { taskId?: string } } };
  expect(result.result?.task?.taskId, created.text).toBeTypeOf("string");
  return result.result!.task!.taskId!;
}

describe("the peer of each request", () => {
  it("is the one of the request that created a task on the plain-JSON path, and of the one that fetched its result on the transport", async () => {
    const log = capture();
    fx = await startHttpServer({ app: { logger: createLogger("info", log.stream) }, http: { trustProxy: 1 } });
    const post = await openSession(fx.url);
    const taskId = await createSleep(post, 1, "10.0.0.1", 0);
    const result = await post({ id: 2, method: "tasks/result", params: { taskId } }, "10.0.0.2");
    // Without the GET stream open, tasks/result is served by the session's SDK transport (as an event stream).
    expect(result.contentType).toContain("text/event-stream");
    expect(result.text).toContain('"id":2');
    const lines = log.lines();
    expect(lines.find((line) => line["audit"] === "created" && line["taskId"] === taskId)).toMatchObject({ peer: "10.0.0.1" });
    expect(lines.find((line) => line["audit"] === "retrieved" && line["taskId"] === taskId)).toMatchObject({ peer: "10.0.0.2" });
  });

  it("stays each request's own when a session has several in flight on its transport at once", async () => {
    const log = capture();
    fx = await startHttpServer({ app: { logger: createLogger("info", log.stream) }, http: { trustProxy: 1 } });
    const post = await openSession(fx.url);
    const peers = ["10.0.1.1", "10.0.1.2", "10.0.1.3", "10.0.1.4"];
    const tasks = await Promise.all(peers.map((_, i) => createSleep(post, 10 + i, "10.0.0.9", 150)));
    // All four wait on their tasks at once; each is answered by the transport when its task ends.
    await Promise.all(tasks.map((taskId, i) => post({ id: 20 + i, method: "tasks/result", params: { taskId } }, peers[i]!)));
    const retrieved = log.lines().filter((line) => line["audit"] === "retrieved");
    expect(retrieved).toHaveLength(4);
    for (const [i, taskId] of tasks.entries()) {
      expect(retrieved.find((line) => line["taskId"] === taskId)).toMatchObject({ peer: peers[i] });
    }
  });

  it("is the socket's address when no proxy is trusted, whatever X-Forwarded-For says", async () => {
    const log = capture();
    fx = await startHttpServer({ app: { logger: createLogger("info", log.stream) } });
    const post = await openSession(fx.url);
    const taskId = await createSleep(post, 1, "10.6.6.6", 0);
    await post({ id: 2, method: "tasks/result", params: { taskId } }, "10.6.6.7");
    const lines = log.lines().filter((line) => line["taskId"] === taskId && (line["audit"] === "created" || line["audit"] === "retrieved"));
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).toMatchObject({ peer: "127.0.0.1" });
  });
});
