/**
 * The web view's API over real HTTP: who may see and cancel what (admin token, token-file admin,
 * owner-bound principals), that no credential ever shows up in what it serves or logs, redaction,
 * the live event stream, and clear errors for bad input.
 */
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { staticTokenVerifier } from "../../src/http/bearer-auth.js";
import type { TokenGrant } from "../../src/http/token-file.js";
import type { WebOptions } from "../../src/web/web-routes.js";
import { webRoutes } from "../../src/web/web-routes.js";
import type { TaskServerOptions } from "../../src/mcp/task-server.js";
import { callToolAsTask, captureLogger, expectRpcError, getTask, taskResult } from "../support/conformance.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { openEventStream, webApi, type EventStreamReader } from "../support/web-client.js";

const ADMIN = "admin-token-0123456789";
const TOKENS = new Map<string, string | TokenGrant>([
  ["tok-alice-secret", "alice"],
  ["tok-bob-secret", "bob"],
  ["tok-ops-secret", { principal: "ops", admin: true }],
]);
const ALL_TOKENS = [ADMIN, ...TOKENS.keys()];

let fx: HttpServerFixture | undefined;
let stream: EventStreamReader | undefined;
afterEach(async () => {
  stream?.close();
  stream = undefined;
  await fx?.close();
  fx = undefined;
});

async function start(web: Partial<WebOptions> = {}, logger = captureLogger(), app: Partial<TaskServerOptions> = {}): Promise<HttpServerFixture> {
  const verifier = staticTokenVerifier(TOKENS);
  fx = await startHttpServer({
    app: { logger, ...app },
    http: { verifier },
    routes: (app) => webRoutes(app, { adminTokens: [ADMIN], verifier, feed: { coalesceMs: 5, countsEveryMs: 10 }, ...web }),
  });
  return fx;
}

const get = (path: string, token?: string) => {
  if (!fx) throw new Error("no server");
  return webApi(fx.url, path, token);
};
const post = (path: string, token?: string) => {
  if (!fx) throw new Error("no server");
  return webApi(fx.url, path, token, { method: "POST" });
};

type Summary = { id: string; owner: string | null; status: string; tool: string };
const idsOf = (answer: { json: Record<string, unknown> }): string[] => (answer.json["tasks"] as Summary[]).map((t) => t.id);

describe("web API access", () => {
  it("answers 401 with WWW-Authenticate on every API path without a token or with an unknown one", async () => {
    await start();
    const paths: Array<[string, "GET" | "POST"]> = [
      ["/tasks/api/session", "GET"],
      ["/tasks/api/tasks", "GET"],
      ["/tasks/api/tasks/some-id", "GET"],
      ["/tasks/api/tasks/some-id/cancel", "POST"],
      ["/tasks/api/events", "GET"],
    ];
    for (const [path, method] of paths) {
      for (const token of [undefined, "not-a-token"]) {
        const answer = method === "GET" ? await get(path, token) : await post(path, token);
        expect(answer.status, `${method} ${path}`).toBe(401);
        expect(answer.headers.get("www-authenticate")).toMatch(/^Bearer/);
        expect(answer.json.error?.message).toMatch(/Unauthorized/);
      }
    }
  });

  it("serves the page and its assets without a token: they hold no data", async () => {
    await start();
    for (const path of ["/tasks", "/tasks/assets/tasks.js", "/tasks/assets/tasks.css"]) {
      const answer = await get(path);
      expect(answer.status, path).toBe(200);
      expect(answer.headers.get("content-security-policy")).toContain("script-src 'self'");
    }
  });

  it("a non-admin principal sees only their own tasks, and counts of their own tasks", async () => {
    const server = await start();
    const alice = await server.connect({ token: "tok-alice-secret" });
    const bob = await server.connect({ token: "tok-bob-secret" });
    const mine = await callToolAsTask(alice.client, "sleep", { ms: 60_000 });
    await callToolAsTask(bob.client, "sleep", { ms: 60_000 });
    await callToolAsTask(bob.client, "sleep", { ms: 60_000 });

    const list = await get("/tasks/api/tasks", "tok-alice-secret");
    expect(list.status).toBe(200);
    expect(idsOf(list)).toEqual([mine.task.taskId]);
    expect((list.json["counts"] as Record<string, number>)["working"]).toBe(1);
    const session = await get("/tasks/api/session", "tok-alice-secret");
    expect(session.json).toMatchObject({ principal: "alice", admin: false });
  });

  it("a non-admin principal gets 404 for another owner's task, in detail and cancel, and that task runs on", async () => {
    const server = await start();
    const alice = await server.connect({ token: "tok-alice-secret" });
    const theirs = await callToolAsTask(alice.client, "sleep", { ms: 60_000 });
    const id = theirs.task.taskId;
    const detail = await get(`/tasks/api/tasks/${id}`, "tok-bob-secret");
    expect(detail.status).toBe(404);
    expect(detail.json.error?.message).toBe("Task not found");
    expect((await post(`/tasks/api/tasks/${id}/cancel`, "tok-bob-secret")).status).toBe(404);
    expect((await server.app.engine.store.get(id, { any: true }))?.status).toBe("working");
  });

  it("a non-admin principal cannot filter by owner (403)", async () => {
    await start();
    const answer = await get("/tasks/api/tasks?owner=local%7Cbob", "tok-alice-secret");
    expect(answer.status).toBe(403);
    expect(answer.json.error?.message).toMatch(/admin/);
  });

  it("an admin's cancel spends the admin's rate allowance, not the owner's: it works while the owner is rate-limited (T-SEC-4)", async () => {
    const now = Date.now();
    const server = await start({}, captureLogger(), { now: () => now, rateLimit: { perSecond: 1, burst: 2 }, failedLookups: "off" });
    const alice = await server.connect({ token: "tok-alice-secret" });
    const created = await callToolAsTask(alice.client, "sleep", { ms: 60_000 });
    await expect(getTask(alice.client, created.task.taskId)).resolves.toMatchObject({ status: "working" });
    await expectRpcError(getTask(alice.client, created.task.taskId), -32029);
    const answer = await post(`/tasks/api/tasks/${created.task.taskId}/cancel`, ADMIN);
    expect(answer.status).toBe(200);
    expect(answer.json["task"]).toMatchObject({ id: created.task.taskId, status: "cancelled" });
  });

  it("a non-admin principal cancels their own task", async () => {
    const server = await start();
    const alice = await server.connect({ token: "tok-alice-secret" });
    const created = await callToolAsTask(alice.client, "sleep", { ms: 60_000 });
    const answer = await post(`/tasks/api/tasks/${created.task.taskId}/cancel`, "tok-alice-secret");
    expect(answer.status).toBe(200);
    expect(answer.json["task"]).toMatchObject({ id: created.task.taskId, status: "cancelled" });
  });

  it("the admin token sees every owner's tasks and filters by owner", async () => {
    const server = await start();
    const alice = await server.connect({ token: "tok-alice-secret" });
    const bob = await server.connect({ token: "tok-bob-secret" });
    const a = await callToolAsTask(alice.client, "sleep", { ms: 60_000 });
    const b = await callToolAsTask(bob.client, "sleep", { ms: 60_000 });
    expect(new Set(idsOf(await get("/tasks/api/tasks", ADMIN)))).toEqual(new Set([a.task.taskId, b.task.taskId]));
    expect(idsOf(await get("/tasks/api/tasks?owner=local%7Cbob", ADMIN))).toEqual([b.task.taskId]);
    expect((await get("/tasks/api/session", ADMIN)).json).toMatchObject({ principal: "admin", admin: true });
  });

  it("a token-file principal flagged admin sees every owner's tasks", async () => {
    const server = await start();
    const alice = await server.connect({ token: "tok-alice-secret" });
    const a = await callToolAsTask(alice.client, "sleep", { ms: 60_000 });
    expect(idsOf(await get("/tasks/api/tasks", "tok-ops-secret"))).toEqual([a.task.taskId]);
    expect((await get("/tasks/api/session", "tok-ops-secret")).json).toMatchObject({ principal: "ops", admin: true });
  });

  it("an admin cancels another owner's task as tasks/cancel would: the owner's tasks/result answers -32800, and the statusMessage says an operator did it from the web view", async () => {
    const server = await start();
    const alice = await server.connect({ token: "tok-alice-secret" });
    const created = await callToolAsTask(alice.client, "sleep", { ms: 60_000 });
    const waiting = taskResult(alice.client, created.task.taskId);
    const answer = await post(`/tasks/api/tasks/${created.task.taskId}/cancel`, ADMIN);
    expect(answer.status).toBe(200);
    await expectRpcError(waiting, -32800, /cancelled/);
    expect((await server.app.engine.store.get(created.task.taskId, { any: true }))?.statusMessage).toBe("Cancelled from the web view by an operator");
  });

  it("never shows a bearer token in the page, the API, the event stream or the logs", async () => {
    const logger = captureLogger();
    const server = await start({}, logger);
    const alice = await server.connect({ token: "tok-alice-secret" });
    stream = await openEventStream(server.url, ADMIN);
    const created = await callToolAsTask(alice.client, "sleep", { ms: 10 });
    await taskResult(alice.client, created.task.taskId);
    await stream.events.waitFor((e) => e.event === "task" && e.data["status"] === "completed", "the completed task on the stream");
    const served = [
      (await get("/tasks")).text,
      (await get("/tasks/assets/tasks.js")).text,
      (await get("/tasks/api/session", ADMIN)).text,
      (await get("/tasks/api/session", "tok-alice-secret")).text,
      (await get("/tasks/api/tasks", ADMIN)).text,
      (await get(`/tasks/api/tasks/${created.task.taskId}`, ADMIN)).text,
      (await get(`/tasks/api/tasks/${created.task.taskId}`, "tok-alice-secret")).text,
      stream.raw(),
      JSON.stringify(logger.entries),
    ];
    for (const text of served) for (const token of ALL_TOKENS) expect(text).not.toContain(token);
  });
});

describe("web API data", () => {
  it("the detail shows arguments, the result, the input exchange and the timeline", async () => {
    const server = await start();
    const alice = await server.connect({ token: "tok-alice-secret" });
    alice.client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { answer: "blue" } }));
    const created = await callToolAsTask(alice.client, "ask", { question: "Colour?" });
    await taskResult(alice.client, created.task.taskId);
    const detail = await get(`/tasks/api/tasks/${created.task.taskId}`, "tok-alice-secret");
    const task = detail.json["task"] as Record<string, unknown>;
    expect(task).toMatchObject({
      tool: "ask",
      owner: "local|alice",
      status: "completed",
      arguments: { question: "Colour?" },
      outcome: { kind: "result", value: { content: [{ type: "text", text: "answer: blue" }] } },
    });
    expect(task["inputs"]).toEqual([
      expect.objectContaining({
        method: "elicitation/create",
        params: expect.objectContaining({ message: "Colour?" }),
        answer: { kind: "result", value: expect.objectContaining({ action: "accept", content: { answer: "blue" } }) },
      }),
    ]);
    expect((task["history"] as Array<{ status: string }>).map((c) => c.status)).toEqual(["working", "input_required", "working", "completed"]);
  });

  it("redaction hides arguments, results and the input exchange from every viewer", async () => {
    const server = await start({ redact: { arguments: true, results: true, inputs: true } });
    const alice = await server.connect({ token: "tok-alice-secret" });
    alice.client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { answer: "secret answer" } }));
    const created = await callToolAsTask(alice.client, "ask", { question: "secret question" });
    await taskResult(alice.client, created.task.taskId);
    const detail = await get(`/tasks/api/tasks/${created.task.taskId}`, ADMIN);
    expect(detail.text).not.toContain("secret");
    expect(detail.json["task"]).toMatchObject({
      arguments: "[redacted]",
      outcome: { kind: "result", value: "[redacted]" },
      inputs: [{ method: "elicitation/create", params: "[redacted]", answer: { kind: "result", value: "[redacted]" } }],
    });
    expect((await get("/tasks/api/session", ADMIN)).json["redacted"]).toEqual(["arguments", "results", "inputs"]);
  });

  it("redacting results keeps a stored error's code and message but hides its data", async () => {
    const server = await start({ redact: { results: true } });
    const { client } = await server.connect({ token: "tok-alice-secret" });
    const created = await callToolAsTask(client, "throw", { code: -32001, message: "Quota exceeded" });
    await expectRpcError(taskResult(client, created.task.taskId), -32001);
    const detail = await get(`/tasks/api/tasks/${created.task.taskId}`, ADMIN);
    expect((detail.json["task"] as Record<string, unknown>)["outcome"]).toEqual({ kind: "error", error: { code: -32001, message: "Quota exceeded" } });
  });

  it("pages newest first and walks older pages with nextCursor", async () => {
    const server = await start();
    const { client } = await server.connect({ token: "tok-alice-secret" });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await callToolAsTask(client, "sleep", { ms: 60_000 })).task.taskId);
    const first = await get("/tasks/api/tasks?limit=3", ADMIN);
    expect(idsOf(first)).toHaveLength(3);
    const cursor = first.json["nextCursor"];
    expect(typeof cursor).toBe("string");
    const second = await get(`/tasks/api/tasks?limit=3&after=${String(cursor)}`, ADMIN);
    expect(second.json["nextCursor"]).toBeUndefined();
    const seen = [...idsOf(first), ...idsOf(second)];
    expect(new Set(seen)).toEqual(new Set(ids));
    expect(seen).toHaveLength(5);
  });

  it("filters by status and tool", async () => {
    const server = await start();
    const { client } = await server.connect({ token: "tok-alice-secret" });
    const running = await callToolAsTask(client, "sleep", { ms: 60_000 });
    const failed = await callToolAsTask(client, "fail", { message: "no" });
    await taskResult(client, failed.task.taskId);
    expect(idsOf(await get("/tasks/api/tasks?status=failed", ADMIN))).toEqual([failed.task.taskId]);
    expect(idsOf(await get("/tasks/api/tasks?status=working,input_required&tool=sleep", ADMIN))).toEqual([running.task.taskId]);
    expect(idsOf(await get("/tasks/api/tasks?tool=ask", ADMIN))).toEqual([]);
  });

  it("the event stream sends each visible task's changes and the counts per status", async () => {
    const server = await start();
    const alice = await server.connect({ token: "tok-alice-secret" });
    const bob = await server.connect({ token: "tok-bob-secret" });
    stream = await openEventStream(server.url, "tok-alice-secret");
    const hidden = await callToolAsTask(bob.client, "sleep", { ms: 5 });
    const mine = await callToolAsTask(alice.client, "sleep", { ms: 5 });
    await taskResult(bob.client, hidden.task.taskId);
    await taskResult(alice.client, mine.task.taskId);
    await stream.events.waitFor((e) => e.event === "task" && e.data["id"] === mine.task.taskId && e.data["status"] === "completed", "alice's task to complete on the stream");
    const counts = await stream.events.waitFor((e) => e.event === "counts" && e.data["completed"] === 1, "counts with one completed task");
    expect(counts.data).toEqual({ working: 0, input_required: 0, completed: 1, failed: 0, cancelled: 0 });
    expect(stream.events.filter((e) => e.event === "task" && e.data["id"] === hidden.task.taskId)).toEqual([]);
  });
});

describe("web API bad input", () => {
  it.each([
    ["/tasks/api/tasks?status=done", 400, /Unknown status "done"/],
    ["/tasks/api/tasks?limit=0", 400, /limit/],
    ["/tasks/api/tasks?limit=501", 400, /limit/],
    ["/tasks/api/tasks?limit=ten", 400, /limit/],
    ["/tasks/api/tasks?after=not*a*cursor", 400, /cursor/],
    [`/tasks/api/tasks?after=${Buffer.from('{"x":1}').toString("base64url")}`, 400, /cursor/],
    [`/tasks/api/tasks?tool=${"x".repeat(300)}`, 400, /tool/],
    ["/tasks/api/tasks/no-such-task", 404, /not found/],
    ["/tasks/api/tasks/%E0%A4%A", 404, /not found/],
  ])("GET %s answers %i with a clear message", async (path, status, message) => {
    await start();
    const answer = await get(path, ADMIN);
    expect(answer.status).toBe(status);
    expect(answer.json.error?.message ?? answer.text).toMatch(message);
  });

  it("cancelling a task that already ended answers 409 with its status", async () => {
    const server = await start();
    const { client } = await server.connect({ token: "tok-alice-secret" });
    const created = await callToolAsTask(client, "sleep", { ms: 1 });
    await taskResult(client, created.task.taskId);
    const answer = await post(`/tasks/api/tasks/${created.task.taskId}/cancel`, ADMIN);
    expect(answer.status).toBe(409);
    expect(answer.json.error?.message).toMatch(/terminal status 'completed'/);
  });

  it("a method a path does not serve answers 405 with Allow", async () => {
    await start();
    const answer = await post("/tasks/api/tasks", ADMIN);
    expect(answer.status).toBe(405);
    expect(answer.headers.get("allow")).toBe("GET, HEAD");
  });
});
