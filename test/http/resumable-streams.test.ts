/**
 * Resumable streams on local sessions (Streamable HTTP 2025-11-25, "Resumability and
 * Redelivery"): every SSE stream starts with a priming event, its events carry increasing ids,
 * and a client that reconnects with Last-Event-ID gets what it missed — the result of a plain
 * call still running when its stream dropped, the question of a task whose tasks/result stream
 * dropped while it was out.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { callTool, isAnswerTo, post, rawSession, resume } from "../support/resumable.js";
import { messageOf, openSse } from "../support/sse-stream.js";

let fx: HttpServerFixture;

beforeEach(async () => {
  fx = await startHttpServer({ http: { resumableStreams: { retryMs: 250 } } });
  fx.app.tool("poll", { description: "Ends its stream, then answers.", input: z.object({}) }, async (_args, ctx) => {
    ctx.closeStream?.();
    await new Promise((resolve) => setTimeout(resolve, 100));
    return { content: [{ type: "text" as const, text: "after the reconnection" }] };
  });
});
afterEach(async () => fx.close());

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

  it("answers a blocked tasks/result on its resumed stream once the task ends, after the stream dropped while it waited (T-RES-3)", async () => {
    const headers = await rawSession(fx.url);
    const created = await fetch(fx.url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "sleep", arguments: { ms: 600 }, task: {} } }),
    });
    const taskId = ((await created.json()) as { result: { task: { taskId: string } } }).result.task.taskId;
    const waiting = await post(fx.url, headers, { jsonrpc: "2.0", id: 2, method: "tasks/result", params: { taskId } });
    const priming = await waiting.next();
    waiting.drop();
    await waiting.ended;
    const resumed = await resume(fx.url, headers, priming.id ?? "");
    const answer = messageOf(await resumed.next(isAnswerTo(2)));
    resumed.drop();
    expect(answer?.["result"]).toMatchObject({ content: [{ type: "text", text: "slept 600 ms" }] });
  });

  it("re-delivers a task's question after its tasks/result stream dropped, and the answer on the resumed stream completes the task (T-INPUT-3)", async () => {
    const headers = await rawSession(fx.url);
    // A task-augmented call is answered as plain JSON (T-GET-4).
    const created = await fetch(fx.url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "ask", arguments: { question: "colour?" }, task: {} },
      }),
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

  it("a tool that ends its stream mid-call (ctx.closeStream): the SDK client reconnects after the retry delay and gets the result", async () => {
    const transport = new StreamableHTTPClientTransport(fx.url, {
      reconnectionOptions: { initialReconnectionDelay: 50, maxReconnectionDelay: 500, reconnectionDelayGrowFactor: 1, maxRetries: 3 },
    });
    const client = new Client({ name: "polling", version: "0" });
    await client.connect(transport);
    try {
      const result = await client.callTool({ name: "poll", arguments: {} });
      expect(result.content).toEqual([{ type: "text", text: "after the reconnection" }]);
    } finally {
      await client.close();
    }
  });
});
