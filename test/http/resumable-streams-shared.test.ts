/**
 * Resumable streams on shared (cluster-style) sessions: the POST streams and the session's GET
 * stream carry a priming event and event ids, kept in the task store, so a client resumes with
 * Last-Event-ID on the front it reached — here one node; across fronts on PostgreSQL and after a
 * restart on SQLite in resumable-streams-cluster / -restart.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { callTool, isAnswerTo, post, rawSession, resume } from "../support/resumable.js";
import { messageOf, openSse } from "../support/sse-stream.js";

let fx: HttpServerFixture;

beforeEach(async () => {
  fx = await startHttpServer({ http: { sessions: "shared", resumableStreams: { retryMs: 300 } } });
});
afterEach(async () => fx.close());

const statusOf = (taskId: string, status: string) => (event: { data: string }) => {
  const message = messageOf({ id: undefined, retry: undefined, data: event.data });
  const params = message?.["params"] as { taskId?: string; status?: string } | undefined;
  return message?.["method"] === "notifications/tasks/status" && params?.taskId === taskId && params.status === status;
};

describe("resumable streams on shared sessions", () => {
  it("starts a POST's stream with a priming event: an id, the retry delay and empty data", async () => {
    const headers = await rawSession(fx.url);
    const stream = await post(fx.url, headers, callTool(1, "echo", { text: "hi" }));
    expect(await stream.next()).toEqual({ id: expect.stringMatching(/^[1-9][0-9]*$/), retry: 300, data: "" });
  });

  it("starts the session's GET stream with a priming event", async () => {
    const headers = await rawSession(fx.url);
    const stream = await openSse(fx.url, { method: "GET", headers: { ...headers, accept: "text/event-stream" } });
    expect(await stream.next()).toEqual({ id: expect.stringMatching(/^[1-9][0-9]*$/), retry: 300, data: "" });
    stream.drop();
  });

  it("delivers the result of a plain tools/call whose stream dropped while it ran, on the resumed stream, which then ends", async () => {
    const headers = await rawSession(fx.url);
    const stream = await post(fx.url, headers, callTool(5, "sleep", { ms: 300 }));
    const priming = await stream.next();
    stream.drop();
    await stream.ended;
    const resumed = await resume(fx.url, headers, priming.id ?? "");
    expect(resumed.response.status).toBe(200);
    const answer = messageOf(await resumed.next(isAnswerTo(5)));
    expect(answer?.["result"]).toMatchObject({ content: [{ type: "text", text: "slept 300 ms" }] });
    await resumed.ended;
  });

  it("replays the notifications of the session's GET stream that came while it was down", async () => {
    const headers = await rawSession(fx.url);
    const stream = await openSse(fx.url, { method: "GET", headers: { ...headers, accept: "text/event-stream" } });
    const priming = await stream.next();
    stream.drop();
    await stream.ended;
    await new Promise((resolve) => setTimeout(resolve, 50)); // the server has seen the drop
    const created = await fetch(fx.url, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "sleep", arguments: { ms: 20 }, task: {} } }),
    });
    const taskId = ((await created.json()) as { result: { task: { taskId: string } } }).result.task.taskId;
    await new Promise((resolve) => setTimeout(resolve, 200)); // completed while nobody listened
    const resumed = await resume(fx.url, headers, priming.id ?? "");
    await resumed.next(statusOf(taskId, "completed"));
    resumed.drop();
  });

  it("refuses a Last-Event-ID of another session with HTTP 400", async () => {
    const headers = await rawSession(fx.url);
    const other = await rawSession(fx.url);
    const theirs = await (await post(fx.url, other, callTool(1, "echo", { text: "theirs" }))).next();
    const response = await fetch(fx.url, { headers: { ...headers, accept: "text/event-stream", "last-event-id": theirs.id ?? "" } });
    expect(response.status).toBe(400);
    await response.body?.cancel();
  });
});
