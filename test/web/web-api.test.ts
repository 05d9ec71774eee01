/**
 * The web view's API over real HTTP: who may see and cancel what (admin token, token-file admin,
 * owner-bound principals), that no credential ever shows up in what it serves or logs, redaction,
 * the live event stream, and clear errors for bad input.
 */
import { CreateTaskResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { context, propagation, trace } from "@opentelemetry/api";
import { node } from "@opentelemetry/sdk-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { staticTokenVerifier } from "../../src/http/bearer-auth.js";
import type { TokenGrant } from "../../src/http/token-file.js";
import type { WebOptions } from "../../src/web/web-routes.js";
import { webRoutes } from "../../src/web/web-routes.js";
import type { TaskServerOptions } from "../../src/mcp/task-server.js";
import { callToolAsTask, captureLogger, expectRpcError, getTask, taskResult } from "../support/conformance.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { openEventStream, openEventStreamAt, webApi, type EventStreamReader } from "../support/web-client.js";

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

async function start(
  web: Partial<WebOptions> = {},
  logger = captureLogger(),
  app: Partial<TaskServerOptions> = {},
): Promise<HttpServerFixture> {
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
const post = (path: string, token?: string, body?: unknown) => {
  if (!fx) throw new Error("no server");
  return webApi(fx.url, path, token, {
    method: "POST",
    ...(body !== undefined && { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
};

/** Waits until the task has a question pending, and returns its id. */
async function pendingQuestion(server: HttpServerFixture, taskId: string): Promise<string> {
  for (;;) {
    const [input] = await server.app.engine.store.pendingInputs(taskId);
    if (input) return input.id;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function settled(server: HttpServerFixture, taskId: string): Promise<{ status: string; outcome: unknown }> {
  for (;;) {
    const task = await server.app.engine.store.get(taskId, { any: true });
    if (task && ["completed", "failed", "cancelled"].includes(task.status)) return task;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

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
      ["/tasks/api/tasks/some-id/rerun", "POST"],
      ["/tasks/api/tasks/some-id/inputs/some-input", "POST"],
      ["/tasks/api/cancel", "POST"],
      ["/tasks/api/events", "GET"],
      ["/tasks/api/cluster", "GET"],
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

  it("a finished task's expiresAt is the end of its retention: keepFinishedMs after it ended when that is later than its ttl", async () => {
    const server = await start({}, captureLogger(), { keepFinishedMs: 600_000 });
    const alice = await server.connect({ token: "tok-alice-secret" });
    const done = await callToolAsTask(alice.client, "sleep", { ms: 0 }, { ttl: 5_000 });
    const ended = await settled(server, done.task.taskId);
    const stored = await server.app.engine.store.get(done.task.taskId, { any: true });
    const detail = await get(`/tasks/api/tasks/${done.task.taskId}`, "tok-alice-secret");
    expect(ended.status).toBe("completed");
    expect(detail.json["task"]).toMatchObject({ ttlMs: 5_000, expiresAt: (stored?.updatedAt ?? 0) + 600_000 });
    const list = await get("/tasks/api/tasks", "tok-alice-secret");
    expect((list.json["tasks"] as Array<{ expiresAt: number }>)[0]?.expiresAt).toBe((stored?.updatedAt ?? 0) + 600_000);
  });

  it("a non-admin principal cannot filter by owner (403)", async () => {
    await start();
    const answer = await get("/tasks/api/tasks?owner=local%7Cbob", "tok-alice-secret");
    expect(answer.status).toBe(403);
    expect(answer.json.error?.message).toMatch(/admin/);
  });

  it("the cluster view (workers, leases) is for admins: 403 for an owner; on a single node it says there is no cluster", async () => {
    await start();
    const refused = await get("/tasks/api/cluster", "tok-alice-secret");
    expect(refused.status).toBe(403);
    expect(refused.json.error?.message).toMatch(/admins only/);
    expect((await get("/tasks/api/cluster", ADMIN)).json).toEqual({ clustered: false });
    expect((await get("/tasks/api/cluster", "tok-ops-secret")).json).toEqual({ clustered: false });
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
    expect((await server.app.engine.store.get(created.task.taskId, { any: true }))?.statusMessage).toBe(
      "Cancelled from the web view by an operator",
    );
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
    expect((task["history"] as Array<{ status: string }>).map((c) => c.status)).toEqual([
      "working",
      "input_required",
      "working",
      "completed",
    ]);
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
    expect((detail.json["task"] as Record<string, unknown>)["outcome"]).toEqual({
      kind: "error",
      error: { code: -32001, message: "Quota exceeded" },
    });
  });

  it("a task created where nothing traces (no OpenTelemetry SDK registered) has no trace id in its detail", async () => {
    const server = await start({ traceUrl: "https://tracing.example/trace/{traceId}" });
    const { client } = await server.connect({ token: "tok-alice-secret" });
    const created = await client.request(
      {
        method: "tools/call",
        params: {
          name: "sleep",
          arguments: { ms: 5 },
          task: {},
          _meta: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" },
        },
      },
      CreateTaskResultSchema,
    );
    expect((await get(`/tasks/api/tasks/${created.task.taskId}`, ADMIN)).json["task"]).toMatchObject({ traceId: null, traceUrl: null });
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
    await stream.events.waitFor(
      (e) => e.event === "task" && e.data["id"] === mine.task.taskId && e.data["status"] === "completed",
      "alice's task to complete on the stream",
    );
    const counts = await stream.events.waitFor((e) => e.event === "counts" && e.data["completed"] === 1, "counts with one completed task");
    expect(counts.data).toEqual({ working: 0, input_required: 0, completed: 1, failed: 0, cancelled: 0 });
    expect(stream.events.filter((e) => e.event === "task" && e.data["id"] === hidden.task.taskId)).toEqual([]);
  });
});

describe("web API trace link", () => {
  // A real tracer provider in this process, exporting nowhere: it carries the request's context
  // to where the task is created, as the CLI's SDK does (without one every span is a no-op and
  // no trace is stored with a task).
  let provider: InstanceType<typeof node.NodeTracerProvider>;
  beforeAll(() => {
    provider = new node.NodeTracerProvider();
    provider.register();
  });
  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  });

  it("the detail shows the trace id of the request that created the task, linked through the trace URL template", async () => {
    const server = await start({ traceUrl: "https://tracing.example/trace/{traceId}?from=mcp-tasks" });
    const { client } = await server.connect({ token: "tok-alice-secret" });
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const created = await client.request(
      {
        method: "tools/call",
        params: { name: "sleep", arguments: { ms: 5 }, task: {}, _meta: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } },
      },
      CreateTaskResultSchema,
    );
    const detail = await get(`/tasks/api/tasks/${created.task.taskId}`, "tok-alice-secret");
    expect(detail.json["task"]).toMatchObject({ traceId, traceUrl: `https://tracing.example/trace/${traceId}?from=mcp-tasks` });
  });

  it("without a template the detail shows the trace id unlinked; a request that carried no trace context has a trace of its own", async () => {
    const server = await start();
    const { client } = await server.connect({ token: "tok-alice-secret" });
    const created = await callToolAsTask(client, "sleep", { ms: 5 });
    const task = (await get(`/tasks/api/tasks/${created.task.taskId}`, ADMIN)).json["task"] as Record<string, unknown>;
    expect(task["traceId"]).toMatch(/^[0-9a-f]{32}$/);
    expect(task["traceUrl"]).toBeNull();
  });

  it.each([
    ["https://tracing.example/trace/", "must contain {traceId}"],
    ["javascript:alert('{traceId}')", "must be an http(s) URL"],
    ["/trace/{traceId}", "must be an absolute http(s) URL"],
  ])("refuses the trace URL template %s: a link that could not lead to the task's trace", async (traceUrl, reason) => {
    const server = await start();
    expect(() => webRoutes(server.app, { traceUrl })).toThrow(reason);
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

describe("web API search and counts", () => {
  it("filters by owner name as a person types it (alice finds local|alice), by id prefix and by creation time", async () => {
    const server = await start();
    const alice = await server.connect({ token: "tok-alice-secret" });
    const bob = await server.connect({ token: "tok-bob-secret" });
    const a = await callToolAsTask(alice.client, "sleep", { ms: 60_000 });
    const b = await callToolAsTask(bob.client, "sleep", { ms: 60_000 });
    expect(idsOf(await get("/tasks/api/tasks?owner=alice", ADMIN))).toEqual([a.task.taskId]);
    expect((await get("/tasks/api/tasks?owner=alice", ADMIN)).json["tasks"]).toEqual([
      expect.objectContaining({ owner: "local|alice", ownerName: "alice" }),
    ]);
    expect(idsOf(await get(`/tasks/api/tasks?id=${b.task.taskId.slice(0, 12)}`, ADMIN))).toEqual([b.task.taskId]);
    const created = (await server.app.engine.store.get(a.task.taskId, { any: true }))!.createdAt;
    expect(new Set(idsOf(await get(`/tasks/api/tasks?from=${created}`, ADMIN))).has(a.task.taskId)).toBe(true);
    expect(idsOf(await get(`/tasks/api/tasks?to=${created}`, ADMIN))).not.toContain(a.task.taskId);
    expect(idsOf(await get(`/tasks/api/tasks?from=${new Date(created + 60_000).toISOString()}`, ADMIN))).toEqual([]);
  });

  it("counts follow every filter but status", async () => {
    const server = await start();
    const alice = await server.connect({ token: "tok-alice-secret" });
    const bob = await server.connect({ token: "tok-bob-secret" });
    await callToolAsTask(alice.client, "sleep", { ms: 60_000 });
    const failed = await callToolAsTask(alice.client, "fail", { message: "no" });
    await taskResult(alice.client, failed.task.taskId);
    await callToolAsTask(bob.client, "sleep", { ms: 60_000 });
    const counts = (path: string) => get(path, ADMIN).then((answer) => answer.json["counts"]);
    expect(await counts("/tasks/api/tasks")).toMatchObject({ working: 2, failed: 1 });
    expect(await counts("/tasks/api/tasks?owner=alice")).toMatchObject({ working: 1, failed: 1 });
    expect(await counts("/tasks/api/tasks?owner=alice&tool=sleep")).toMatchObject({ working: 1, failed: 0 });
    expect(await counts("/tasks/api/tasks?owner=alice&status=failed")).toMatchObject({ working: 1, failed: 1 });
  });

  it("the event stream's counts follow the filters it was opened with", async () => {
    const server = await start();
    const alice = await server.connect({ token: "tok-alice-secret" });
    const bob = await server.connect({ token: "tok-bob-secret" });
    stream = await openEventStreamAt(server.url, "/tasks/api/events?owner=bob", ADMIN);
    const mine = await callToolAsTask(alice.client, "sleep", { ms: 5 });
    const theirs = await callToolAsTask(bob.client, "sleep", { ms: 60_000 });
    await taskResult(alice.client, mine.task.taskId);
    await stream.events.waitFor((e) => e.event === "task" && e.data["id"] === theirs.task.taskId, "bob's task on the stream");
    const counts = await stream.events.waitFor((e) => e.event === "counts" && e.data["working"] === 1, "counts of bob's tasks");
    expect(counts.data).toEqual({ working: 1, input_required: 0, completed: 0, failed: 0, cancelled: 0 });
  });

  it.each([
    ["/tasks/api/tasks?from=yesterday", /Invalid from/],
    ["/tasks/api/tasks?to=12-01-2026", /Invalid to/],
    ["/tasks/api/tasks?from=2000&to=1000", /from must be earlier than to/],
    [`/tasks/api/tasks?id=${"x".repeat(300)}`, /Invalid id/],
    ["/tasks/api/events?from=soon", /Invalid from/],
  ])("GET %s answers 400 with a clear message", async (path, message) => {
    await start();
    const answer = await get(path, ADMIN);
    expect(answer.status).toBe(400);
    expect(answer.json.error?.message).toMatch(message);
  });
});

describe("web API answers a task's question", () => {
  it("the owner answers an elicitation from the page: the task completes with that answer", async () => {
    const server = await start();
    const alice = await server.connect({ token: "tok-alice-secret" });
    const created = await callToolAsTask(alice.client, "ask", { question: "Colour?" });
    const id = created.task.taskId;
    const inputId = await pendingQuestion(server, id);
    const answer = await post(`/tasks/api/tasks/${id}/inputs/${inputId}`, "tok-alice-secret", {
      action: "accept",
      content: { answer: "green" },
    });
    expect(answer.status).toBe(200);
    expect(await settled(server, id)).toMatchObject({
      status: "completed",
      outcome: { kind: "result", value: { content: [{ type: "text", text: "answer: green" }] } },
    });
  });

  it("an admin declines for the owner", async () => {
    const server = await start();
    const alice = await server.connect({ token: "tok-alice-secret" });
    const created = await callToolAsTask(alice.client, "ask", { question: "Colour?" });
    const inputId = await pendingQuestion(server, created.task.taskId);
    expect((await post(`/tasks/api/tasks/${created.task.taskId}/inputs/${inputId}`, ADMIN, { action: "decline" })).status).toBe(200);
    expect(await settled(server, created.task.taskId)).toMatchObject({
      outcome: { kind: "result", value: { content: [{ type: "text", text: "declined" }] } },
    });
  });

  it("answers a sampling request with a text reply", async () => {
    const server = await start();
    const alice = await server.connect({ token: "tok-alice-secret", capabilities: { sampling: {} } });
    const created = await callToolAsTask(alice.client, "sample", { prompt: "Say hi" });
    const inputId = await pendingQuestion(server, created.task.taskId);
    expect(
      (await post(`/tasks/api/tasks/${created.task.taskId}/inputs/${inputId}`, "tok-alice-secret", { action: "accept", text: "hi there" }))
        .status,
    ).toBe(200);
    expect(await settled(server, created.task.taskId)).toMatchObject({
      outcome: { kind: "result", value: { content: [{ type: "text", text: "hi there" }] } },
    });
  });

  it("another owner gets 404, exactly like an unknown task, and the question stays open (T-SEC-3)", async () => {
    const server = await start();
    const alice = await server.connect({ token: "tok-alice-secret" });
    const created = await callToolAsTask(alice.client, "ask", { question: "Colour?" });
    const inputId = await pendingQuestion(server, created.task.taskId);
    const answer = await post(`/tasks/api/tasks/${created.task.taskId}/inputs/${inputId}`, "tok-bob-secret", {
      action: "accept",
      content: { answer: "red" },
    });
    expect(answer.status).toBe(404);
    expect(answer.json.error?.message).toBe("Task not found");
    expect(await server.app.engine.store.pendingInputs(created.task.taskId)).toHaveLength(1);
  });

  it.each([
    [{ action: "accept", content: { answer: 3 } }, /Invalid field "answer": expected a string/],
    [{ action: "accept", content: {} }, /Missing required field "answer"/],
    [{ action: "maybe" }, /Invalid answer at action/],
    [{ action: "decline", content: { answer: "x" } }, /carries no content/],
    ["not json", /not JSON/],
  ])("an answer %j is refused with 400 and a clear message, and the question stays open", async (body, message) => {
    const server = await start();
    const alice = await server.connect({ token: "tok-alice-secret" });
    const created = await callToolAsTask(alice.client, "ask", { question: "Colour?" });
    const inputId = await pendingQuestion(server, created.task.taskId);
    const answer = await post(`/tasks/api/tasks/${created.task.taskId}/inputs/${inputId}`, "tok-alice-secret", body);
    expect(answer.status).toBe(400);
    expect(answer.json.error?.message).toMatch(message);
    expect(await server.app.engine.store.pendingInputs(created.task.taskId)).toHaveLength(1);
  });

  it("a second answer to the same question answers 409; an unknown question 404", async () => {
    const server = await start();
    const alice = await server.connect({ token: "tok-alice-secret" });
    const created = await callToolAsTask(alice.client, "ask", { question: "Colour?" });
    const id = created.task.taskId;
    const inputId = await pendingQuestion(server, id);
    expect((await post(`/tasks/api/tasks/${id}/inputs/no-such-input`, ADMIN, { action: "cancel" })).status).toBe(404);
    expect((await post(`/tasks/api/tasks/${id}/inputs/${inputId}`, ADMIN, { action: "cancel" })).status).toBe(200);
    await settled(server, id);
    const again = await post(`/tasks/api/tasks/${id}/inputs/${inputId}`, ADMIN, { action: "cancel" });
    expect(again.status).toBe(409);
  });
});

describe("web API re-run and bulk cancel", () => {
  it("re-runs a finished task: a new task with the same tool and arguments, for the same owner", async () => {
    const server = await start();
    const alice = await server.connect({ token: "tok-alice-secret" });
    const first = await callToolAsTask(alice.client, "sleep", { ms: 1 });
    await taskResult(alice.client, first.task.taskId);
    const answer = await post(`/tasks/api/tasks/${first.task.taskId}/rerun`, ADMIN);
    expect(answer.status).toBe(200);
    const rerun = answer.json["task"] as Summary;
    expect(rerun).toMatchObject({ tool: "sleep", owner: "local|alice" });
    expect(rerun.id).not.toBe(first.task.taskId);
    expect(await settled(server, rerun.id)).toMatchObject({
      status: "completed",
      outcome: { kind: "result", value: { content: [{ type: "text", text: "slept 1 ms" }] } },
    });
    // The owner reaches the new task through MCP like any of theirs.
    await expect(getTask(alice.client, rerun.id)).resolves.toMatchObject({ status: "completed" });
  });

  it('a re-run keeps the tool\'s recovery: a re-run of a "resume" tool is stored to resume after a crash, like a task tools/call creates', async () => {
    const server = await start();
    const alice = await server.connect({ token: "tok-alice-secret" });
    const first = await callToolAsTask(alice.client, "steps", { count: 1, ms: 1 });
    await taskResult(alice.client, first.task.taskId);
    const answer = await post(`/tasks/api/tasks/${first.task.taskId}/rerun`, "tok-alice-secret");
    expect(answer.status).toBe(200);
    const rerun = await server.app.engine.inspect.task((answer.json["task"] as Summary).id);
    const original = await server.app.engine.inspect.task(first.task.taskId);
    expect(original).toMatchObject({ retryable: true, origin: { recovery: "resume" } });
    expect(rerun).toMatchObject({ retryable: true, origin: { recovery: "resume" } });
  });

  it("re-running another owner's task answers 404 and creates nothing; a running task 409", async () => {
    const server = await start();
    const alice = await server.connect({ token: "tok-alice-secret" });
    const done = await callToolAsTask(alice.client, "sleep", { ms: 1 });
    await taskResult(alice.client, done.task.taskId);
    const running = await callToolAsTask(alice.client, "sleep", { ms: 60_000 });
    const denied = await post(`/tasks/api/tasks/${done.task.taskId}/rerun`, "tok-bob-secret");
    expect(denied.status).toBe(404);
    expect(denied.json.error?.message).toBe("Task not found");
    const busy = await post(`/tasks/api/tasks/${running.task.taskId}/rerun`, "tok-alice-secret");
    expect(busy.status).toBe(409);
    expect(busy.json.error?.message).toMatch(/Only a finished task/);
    expect(idsOf(await get("/tasks/api/tasks", ADMIN))).toHaveLength(2);
  });

  it("cancels several tasks at once, each recorded as cancelled from the web view, and reports the ones it could not", async () => {
    const server = await start();
    const alice = await server.connect({ token: "tok-alice-secret" });
    const bob = await server.connect({ token: "tok-bob-secret" });
    const a1 = await callToolAsTask(alice.client, "sleep", { ms: 60_000 });
    const a2 = await callToolAsTask(alice.client, "sleep", { ms: 60_000 });
    const b1 = await callToolAsTask(bob.client, "sleep", { ms: 60_000 });
    const ids = [a1.task.taskId, a2.task.taskId, b1.task.taskId];
    const answer = await post("/tasks/api/cancel", "tok-alice-secret", { ids });
    expect(answer.status).toBe(200);
    expect(answer.json["results"]).toEqual([
      { id: a1.task.taskId, task: expect.objectContaining({ status: "cancelled", statusMessage: "Cancelled from the web view" }) },
      { id: a2.task.taskId, task: expect.objectContaining({ status: "cancelled" }) },
      { id: b1.task.taskId, error: { message: "Task not found" } },
    ]);
    expect((await server.app.engine.store.get(b1.task.taskId, { any: true }))?.status).toBe("working");
  });

  it.each([
    [{}, /Invalid body at ids/],
    [{ ids: [] }, /Invalid body at ids/],
    [{ ids: "abc" }, /Invalid body at ids/],
    ["[", /not JSON/],
  ])("a bulk cancel with %j answers 400 with a clear message", async (body, message) => {
    await start();
    const answer = await post("/tasks/api/cancel", ADMIN, body);
    expect(answer.status).toBe(400);
    expect(answer.json.error?.message).toMatch(message);
  });
});

describe("web API stats (the charts)", () => {
  it("counts the window's finished tasks per bucket and their run times, for the viewer's filtered tasks only", async () => {
    const server = await start();
    const alice = await server.connect({ token: "tok-alice-secret" });
    const bob = await server.connect({ token: "tok-bob-secret" });
    const done = await callToolAsTask(alice.client, "sleep", { ms: 1 });
    const failed = await callToolAsTask(alice.client, "fail", { message: "no" });
    const theirs = await callToolAsTask(bob.client, "sleep", { ms: 1 });
    for (const [client, id] of [
      [alice.client, done.task.taskId],
      [alice.client, failed.task.taskId],
      [bob.client, theirs.task.taskId],
    ] as const)
      await taskResult(client, id);
    await callToolAsTask(alice.client, "sleep", { ms: 60_000 });
    const stats = (await get("/tasks/api/stats", "tok-alice-secret")).json as unknown as {
      throughput: Array<{ completed: number; failed: number; cancelled: number }>;
      durations: { count: number; histogram: Array<{ count: number }> };
      truncated: boolean;
      queueDepth?: number;
    };
    const sum = (key: "completed" | "failed" | "cancelled") => stats.throughput.reduce((n, b) => n + b[key], 0);
    expect([sum("completed"), sum("failed"), sum("cancelled")]).toEqual([1, 1, 0]);
    expect(stats.durations.count).toBe(2);
    expect(stats.durations.histogram.reduce((n, b) => n + b.count, 0)).toBe(2);
    expect(stats.truncated).toBe(false);
    // Not a cluster: no queue to report.
    expect(stats.queueDepth).toBeUndefined();
    const sleeps = (await get("/tasks/api/stats?tool=sleep", ADMIN)).json as unknown as typeof stats;
    expect(sleeps.durations.count).toBe(2);
  });

  it("lists the tasks waiting for a handler per tool and owner, within the viewer's scope", async () => {
    const server = await start({}, captureLogger(), { maxRunningPerOwner: 1 });
    const alice = await server.connect({ token: "tok-alice-secret" });
    const bob = await server.connect({ token: "tok-bob-secret" });
    for (let i = 0; i < 3; i++) await callToolAsTask(alice.client, "sleep", { ms: 60_000 });
    for (let i = 0; i < 2; i++) await callToolAsTask(bob.client, "sleep", { ms: 60_000 });
    type Queued = { queued?: Array<{ owner: string | null; tool: string; queued: number }> };
    await expect
      .poll(async () => ((await get("/tasks/api/stats", "tok-alice-secret")).json as unknown as Queued).queued)
      .toEqual([{ owner: "local|alice", tool: "sleep", queued: 2 }]);
    const all = ((await get("/tasks/api/stats", ADMIN)).json as unknown as Queued).queued ?? [];
    expect(all.sort((a, b) => String(a.owner).localeCompare(String(b.owner)))).toEqual([
      { owner: "local|alice", tool: "sleep", queued: 2 },
      { owner: "local|bob", tool: "sleep", queued: 1 },
    ]);
  });

  it("adds up to the finished tasks the listing counts for the same window, one that ended after the window's end included", async () => {
    const server = await start();
    const { client } = await server.connect({ token: "tok-alice-secret" });
    const created = await callToolAsTask(client, "sleep", { ms: 200 });
    await taskResult(client, created.task.taskId);
    const task = await server.app.engine.store.get(created.task.taskId, { any: true });
    // Created inside the window, ended after it; 30 s is 30 buckets of a second that end at `to`.
    const to = (task?.createdAt ?? 0) + 1;
    const window = `from=${to - 30_000}&to=${to}`;
    const listed = (await get(`/tasks/api/tasks?${window}`, "tok-alice-secret")).json as unknown as { counts: Record<string, number> };
    const stats = (await get(`/tasks/api/stats?${window}`, "tok-alice-secret")).json as unknown as {
      throughput: Array<{ completed: number; failed: number; cancelled: number }>;
    };
    const finished = stats.throughput.reduce((n, b) => n + b.completed + b.failed + b.cancelled, 0);
    expect(listed.counts["completed"]).toBe(1);
    expect(finished).toBe(1);
  });

  it("refuses a bad filter with 400 like the listing", async () => {
    await start();
    const answer = await get("/tasks/api/stats?from=later", ADMIN);
    expect(answer.status).toBe(400);
    expect(answer.json.error?.message).toMatch(/Invalid from/);
  });
});
