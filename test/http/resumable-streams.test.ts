/**
 * Resumable streams on local sessions (Streamable HTTP 2025-11-25, "Resumability and
 * Redelivery"): every SSE stream starts with a priming event, its events carry increasing ids,
 * and a client that reconnects with Last-Event-ID gets what it missed — the result of a plain
 * call still running when its stream dropped, the question of a task whose tasks/result stream
 * dropped while it was out.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { messageOf, openSse, type SseEvent, type SseStream } from "../support/sse-stream.js";

const V = "2025-11-25";
let fx: HttpServerFixture;

beforeEach(async () => {
  fx = await startHttpServer({ http: { resumableStreams: { retryMs: 250 } } });
});
afterEach(async () => fx.close());

/** A session opened with raw requests (no SDK client holding the GET stream): its headers. */
async function rawSession(url: URL, capabilities: Record<string, unknown> = { elicitation: {} }): Promise<Record<string, string>> {
  const init = await post(url, {}, { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: V, capabilities, clientInfo: { name: "raw", version: "0" } } });
  await init.next((e) => messageOf(e)?.["id"] === 0);
  const sessionId = init.response.headers.get("mcp-session-id");
  if (!sessionId) throw new Error("no session id");
  const headers = { "mcp-session-id": sessionId, "mcp-protocol-version": V };
  const ack = await fetch(url, { method: "POST", headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) });
  expect(ack.status).toBe(202);
  return headers;
}

function post(url: URL, headers: Record<string, string>, body: unknown): Promise<SseStream> {
  return openSse(url, { method: "POST", headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify(body) });
}

function resume(url: URL, headers: Record<string, string>, lastEventId: string): Promise<SseStream> {
  return openSse(url, { method: "GET", headers: { ...headers, accept: "text/event-stream", "last-event-id": lastEventId } });
}

const callTool = (id: number, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args, ...(meta && { _meta: meta }) },
});

const isAnswerTo = (id: number) => (event: SseEvent) => {
  const message = messageOf(event);
  return message?.["id"] === id && message["method"] === undefined;
};

describe("resumable streams on local sessions", () => {
  it("starts a POST's stream with a priming event: an id, the retry delay and empty data", async () => {
    const headers = await rawSession(fx.url);
    const stream = await post(fx.url, headers, callTool(1, "echo", { text: "hi" }));
    const first = await stream.next();
    expect(first).toEqual({ id: expect.stringMatching(/^[1-9][0-9]*$/), retry: 250, data: "" });
  });

  it("starts the standalone GET stream with a priming event", async () => {
    const headers = await rawSession(fx.url);
    const stream = await openSse(fx.url, { method: "GET", headers: { ...headers, accept: "text/event-stream" } });
    expect(stream.response.status).toBe(200);
    const first = await stream.next();
    expect(first).toEqual({ id: expect.stringMatching(/^[1-9][0-9]*$/), retry: 250, data: "" });
    stream.drop();
  });

  it("gives each event of a stream an id greater than the one before", async () => {
    const headers = await rawSession(fx.url);
    const stream = await post(fx.url, headers, callTool(1, "sleep", { ms: 40, steps: 4 }, { progressToken: "p" }));
    await stream.next(isAnswerTo(1));
    const ids = stream.events.map((event) => Number(event.id));
    expect(ids.length).toBeGreaterThanOrEqual(6); // priming, 4 progress notifications, the result
    expect(ids.every((id, i) => i === 0 || id > (ids[i - 1] ?? 0))).toBe(true);
  });

  it("replays, after Last-Event-ID, only the events that came later", async () => {
    const headers = await rawSession(fx.url);
    const stream = await post(fx.url, headers, callTool(1, "sleep", { ms: 40, steps: 4 }, { progressToken: "p" }));
    await stream.next(isAnswerTo(1));
    const cut = stream.events[2];
    if (!cut?.id) throw new Error("no third event");
    const resumed = await resume(fx.url, headers, cut.id);
    expect(resumed.response.status).toBe(200);
    await resumed.next(isAnswerTo(1));
    resumed.drop();
    const later = stream.events.slice(3).map((event) => ({ id: event.id, data: event.data }));
    expect(resumed.events.map((event) => ({ id: event.id, data: event.data }))).toEqual(later);
  });

  it("delivers the result of a plain tools/call whose stream dropped while it ran, on the resumed stream", async () => {
    const headers = await rawSession(fx.url);
    const stream = await post(fx.url, headers, callTool(7, "sleep", { ms: 300 }));
    const priming = await stream.next();
    stream.drop();
    await stream.ended;
    const resumed = await resume(fx.url, headers, priming.id ?? "");
    const answer = messageOf(await resumed.next(isAnswerTo(7)));
    resumed.drop();
    expect(answer?.["result"]).toMatchObject({ content: [{ type: "text", text: "slept 300 ms" }] });
  });

  it("delivers the result of a call that ended while its stream was down, by replay", async () => {
    const headers = await rawSession(fx.url);
    const stream = await post(fx.url, headers, callTool(8, "sleep", { ms: 50 }));
    const priming = await stream.next();
    stream.drop();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const resumed = await resume(fx.url, headers, priming.id ?? "");
    const answer = messageOf(await resumed.next(isAnswerTo(8)));
    resumed.drop();
    expect(answer?.["result"]).toMatchObject({ content: [{ type: "text", text: "slept 50 ms" }] });
  });

  it("re-delivers a task's question after its tasks/result stream dropped, and the answer on the resumed stream completes the task (T-INPUT-3)", async () => {
    const headers = await rawSession(fx.url);
    // A task-augmented call is answered as plain JSON (T-GET-4).
    const created = await fetch(fx.url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "ask", arguments: { question: "colour?" }, task: {} } }),
    });
    const taskId = ((await created.json()) as { result: { task: { taskId: string } } }).result.task.taskId;

    const waiting = await post(fx.url, headers, { jsonrpc: "2.0", id: 2, method: "tasks/result", params: { taskId } });
    const priming = await waiting.next();
    await waiting.next((event) => messageOf(event)?.["method"] === "elicitation/create");
    waiting.drop();
    await waiting.ended;

    const resumed = await resume(fx.url, headers, priming.id ?? "");
    const question = messageOf(await resumed.next((event) => messageOf(event)?.["method"] === "elicitation/create"));
    const reply = await fetch(fx.url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: question?.["id"], result: { action: "accept", content: { answer: "teal" } } }),
    });
    expect(reply.status).toBe(202);
    const answer = messageOf(await resumed.next(isAnswerTo(2)));
    resumed.drop();
    expect(answer?.["result"]).toMatchObject({ content: [{ type: "text", text: "answer: teal" }] });
  });

  it("refuses a Last-Event-ID the session never issued with HTTP 400", async () => {
    const headers = await rawSession(fx.url);
    const other = await rawSession(fx.url);
    const stream = await post(fx.url, other, callTool(1, "echo", { text: "theirs" }));
    const theirs = await stream.next();
    for (const id of [theirs.id ?? "", "999999999", "not-an-id"]) {
      const response = await fetch(fx.url, { headers: { ...headers, accept: "text/event-stream", "last-event-id": id } });
      expect(response.status).toBe(400);
      await response.body?.cancel();
    }
  });
});
