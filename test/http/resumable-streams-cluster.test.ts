/**
 * Resumable streams across the fronts of a cluster (PostgreSQL store and bus, shared sessions):
 * a client whose stream dropped on one front resumes it with Last-Event-ID on the other, and gets
 * what the first front went on sending meanwhile.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerDemoTools } from "../../src/demo/demo-tools.js";
import { pgEventBus } from "../../src/events/pg-event-bus.js";
import { serveHttp, type HttpHandle } from "../../src/http/http-server.js";
import { createTaskServer, type TaskServer } from "../../src/mcp/task-server.js";
import { postgresStore } from "../../src/store/postgres/postgres-store.js";
import { pgQuery, TEST_PG_URL, uniqueName } from "../support/postgres.js";
import { callTool, isAnswerTo, post, rawSession, resume } from "../support/resumable.js";
import { messageOf, openSse } from "../support/sse-stream.js";

const schema = uniqueName("resume_cluster");
const nodes: Array<{ app: TaskServer; http: HttpHandle; url: URL }> = [];

beforeAll(async () => {
  for (const name of ["front-a", "front-b"]) {
    const bus = pgEventBus({ connectionString: TEST_PG_URL, channel: schema });
    const app = registerDemoTools(
      createTaskServer({
        name,
        version: "0.0.0",
        store: postgresStore(TEST_PG_URL, { schema }),
        bus,
        cluster: { workerId: name, concurrency: 2 },
      }),
    );
    const http = await serveHttp(app, { port: 0, host: "127.0.0.1", resumableStreams: { retryMs: 200 } });
    await bus.ready;
    nodes.push({ app, http, url: new URL(http.url) });
  }
}, 30_000);

afterAll(async () => {
  for (const node of nodes) {
    await node.http.close();
    await node.app.close();
  }
  await pgQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
});

const front = (i: number): URL => {
  const node = nodes[i];
  if (!node) throw new Error(`no front ${i}`);
  return node.url;
};

describe("resumable streams across fronts", { timeout: 20_000 }, () => {
  it("a plain tools/call whose stream dropped on one front: resuming on the other front delivers its result", async () => {
    const headers = await rawSession(front(0));
    const stream = await post(front(0), headers, callTool(4, "sleep", { ms: 400 }));
    const priming = await stream.next();
    stream.drop();
    await stream.ended;
    const resumed = await resume(front(1), headers, priming.id ?? "");
    expect(resumed.response.status).toBe(200);
    const answer = messageOf(await resumed.next(isAnswerTo(4)));
    expect(answer?.["result"]).toMatchObject({ content: [{ type: "text", text: "slept 400 ms" }] });
    await resumed.ended;
  });

  it("a tasks/result whose stream dropped on one front: resuming on the other ends it with -32000, and the next tasks/result there gets the question again (T-INPUT-5)", async () => {
    const headers = await rawSession(front(0));
    const created = await fetch(front(0), {
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
    const waiting = await post(front(0), headers, { jsonrpc: "2.0", id: 2, method: "tasks/result", params: { taskId } });
    const priming = await waiting.next();
    await waiting.next((event) => messageOf(event)?.["method"] === "elicitation/create");
    waiting.drop();
    await waiting.ended;

    const resumed = await resume(front(1), headers, priming.id ?? "");
    const ended = messageOf(await resumed.next(isAnswerTo(2)));
    expect(ended?.["error"]).toMatchObject({ code: -32000, message: expect.stringMatching(/call tasks\/result again/) });
    await resumed.ended;

    const again = await post(front(1), headers, { jsonrpc: "2.0", id: 3, method: "tasks/result", params: { taskId } });
    const question = messageOf(await again.next((event) => messageOf(event)?.["method"] === "elicitation/create"));
    const reply = await fetch(front(1), {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: question?.["id"], result: { action: "accept", content: { answer: "teal" } } }),
    });
    expect(reply.status).toBe(202);
    const answer = messageOf(await again.next(isAnswerTo(3)));
    expect(answer?.["result"]).toMatchObject({ content: [{ type: "text", text: "answer: teal" }] });
  });

  it("the session's GET stream dropped on one front: resuming on the other replays the notifications that came meanwhile", async () => {
    const headers = await rawSession(front(0));
    const stream = await openSse(front(0), { method: "GET", headers: { ...headers, accept: "text/event-stream" } });
    const priming = await stream.next();
    stream.drop();
    await stream.ended;
    await new Promise((resolve) => setTimeout(resolve, 100)); // front A has seen the drop
    const created = await fetch(front(1), {
      method: "POST",
      headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "sleep", arguments: { ms: 20 }, task: {} } }),
    });
    const taskId = ((await created.json()) as { result: { task: { taskId: string } } }).result.task.taskId;
    await new Promise((resolve) => setTimeout(resolve, 500)); // completed while no stream was open
    const resumed = await resume(front(1), headers, priming.id ?? "");
    await resumed.next((event) => {
      const message = messageOf(event);
      const params = message?.["params"] as { taskId?: string; status?: string } | undefined;
      return message?.["method"] === "notifications/tasks/status" && params?.taskId === taskId && params.status === "completed";
    });
    resumed.drop();
  });
});
