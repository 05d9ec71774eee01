/**
 * The operator's console API over real HTTP (docs/web-view.md): starting a tool — the tool list
 * with task support, server-side validation that names the field, forbidden tools refused, the
 * task bound to the signed-in principal (an admin acting as one only with `owner`), the audit line —
 * and a task's timeline, owner-bound like every task route (T-SEC-3).
 */
import { afterEach, describe, expect, it } from "vitest";
import { staticTokenVerifier } from "../../src/http/bearer-auth.js";
import type { TokenGrant } from "../../src/http/token-file.js";
import type { TaskServerOptions } from "../../src/mcp/task-server.js";
import { webRoutes, type WebOptions } from "../../src/web/web-routes.js";
import { captureLogger, getTask } from "../support/conformance.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { httpReceiver, type HttpReceiver } from "../support/http-receiver.js";
import { webApi } from "../support/web-client.js";

const ADMIN = "admin-token-for-the-console-api";
const TOKENS = new Map<string, string | TokenGrant>([
  ["tok-alice-console", "alice"],
  ["tok-bob-console", "bob"],
]);
const ALICE = "tok-alice-console";
const BOB = "tok-bob-console";

let fx: HttpServerFixture | undefined;
let receiver: HttpReceiver | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
  await receiver?.close();
  receiver = undefined;
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
    routes: (app) => webRoutes(app, { adminTokens: [ADMIN], verifier, ...web }),
  });
  return fx;
}

const get = (path: string, token: string) => webApi(fx!.url, path, token);
const post = (path: string, token: string, body: unknown) =>
  webApi(fx!.url, path, token, { method: "POST", body: typeof body === "string" ? body : JSON.stringify(body) });

async function settled(taskId: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const task = await fx!.app.engine.inspect.task(taskId);
    if (task && ["completed", "failed", "cancelled"].includes(task.status)) return;
    if (Date.now() > deadline) throw new Error(`${taskId} never finished`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

type ToolRow = { name: string; taskSupport: string; startable: boolean; inputSchema: { properties?: Record<string, unknown> } };

describe("starting a tool from the web view", () => {
  it("lists every tool with its task support and input schema; a tool that forbids tasks is listed, not startable", async () => {
    await start();
    const answer = await get("/tasks/api/tools", ALICE);
    expect(answer.status).toBe(200);
    const tools = answer.json["tools"] as ToolRow[];
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get("echo")).toMatchObject({ taskSupport: "forbidden", startable: false });
    expect(byName.get("sleep")).toMatchObject({ taskSupport: "optional", startable: true });
    expect(byName.get("batch")).toMatchObject({ taskSupport: "required", startable: true });
    expect(Object.keys(byName.get("steps")?.inputSchema.properties ?? {})).toEqual(["count", "ms"]);
    expect((await webApi(fx!.url, "/tasks/api/tools")).status).toBe(401);
  });

  it("starts the task for the signed-in principal: its owner's MCP session reads it, and the audit log names who started it", async () => {
    const logger = captureLogger();
    await start({}, logger);
    const answer = await post("/tasks/api/tools/sleep/start", ALICE, { arguments: { ms: 5 } });
    expect(answer.status).toBe(200);
    const task = answer.json["task"] as { id: string; owner: string; tool: string };
    expect(task).toMatchObject({ tool: "sleep", owner: "local|alice" });
    const { client } = await fx!.connect({ token: ALICE });
    expect((await getTask(client, task.id)).taskId).toBe(task.id);
    const audit = logger.entries.find((entry) => entry.obj["audit"] === "start_requested");
    expect(audit?.obj).toMatchObject({ via: "web", taskId: task.id, tool: "sleep", owner: "local|alice", principal: "alice" });
    expect(audit?.obj["actingAs"]).toBeUndefined();
  });

  it("refuses arguments that do not fit the tool's schema with 400 naming the field, and creates nothing", async () => {
    await start();
    const wrongType = await post("/tasks/api/tools/steps/start", ALICE, { arguments: { count: "three", ms: 1 } });
    expect(wrongType.status).toBe(400);
    expect(wrongType.json.error?.message).toMatch(/^Invalid arguments for tool steps: count: /);
    const missing = await post("/tasks/api/tools/steps/start", ALICE, { arguments: { count: 1 } });
    expect(missing.status).toBe(400);
    expect(missing.json.error?.message).toMatch(/steps: ms: /);
    const badBody = await post("/tasks/api/tools/steps/start", ALICE, { arguments: { count: 1, ms: 1 }, extra: true });
    expect(badBody.status).toBe(400);
    expect(badBody.json.error?.message).toMatch(/^Invalid body/);
    expect(await fx!.app.engine.inspect.search({ scope: { any: true } }, null, 10)).toEqual([]);
  });

  it("refuses a tool that forbids tasks (403) and an unknown tool (404)", async () => {
    await start();
    const forbidden = await post("/tasks/api/tools/echo/start", ALICE, { arguments: { text: "hi" } });
    expect(forbidden.status).toBe(403);
    expect(forbidden.json.error?.message).toBe(
      'The tool echo forbids tasks (execution.taskSupport is "forbidden"): call it from an MCP client instead',
    );
    const unknown = await post("/tasks/api/tools/no-such-tool/start", ALICE, { arguments: {} });
    expect(unknown.status).toBe(404);
    expect(await fx!.app.engine.inspect.search({ scope: { any: true } }, null, 10)).toEqual([]);
  });

  it("an admin acts as a principal only by naming its owner key; anyone else naming one is refused", async () => {
    const logger = captureLogger();
    await start({}, logger);
    const refused = await post("/tasks/api/tools/sleep/start", BOB, { arguments: { ms: 1 }, owner: "local|alice" });
    expect(refused.status).toBe(403);
    const asAlice = await post("/tasks/api/tools/sleep/start", ADMIN, { arguments: { ms: 1 }, owner: "local|alice" });
    expect(asAlice.status).toBe(200);
    const task = asAlice.json["task"] as { id: string; owner: string };
    expect(task.owner).toBe("local|alice");
    expect(logger.entries.find((entry) => entry.obj["audit"] === "start_requested")?.obj).toMatchObject({
      taskId: task.id,
      owner: "local|alice",
      principal: "admin",
      actingAs: "admin",
    });
    const unbound = await post("/tasks/api/tools/sleep/start", ADMIN, { arguments: { ms: 1 } });
    expect((unbound.json["task"] as { owner: string | null }).owner).toBeNull();
  });
});

type Timeline = {
  status: Array<{ status: string; statusMessage: string | null }>;
  runs: Array<{ attempt: number; startedBy: string; ended: string }>;
  steps: Array<{ name: string; ms: number | null; attempt: number | null; bytes: number }>;
  questions: Array<{ method: string; params: unknown; answer: unknown }>;
  waits: Array<{ kind: string; event: string | null; state: string; parked: boolean; dueAt: number | null }>;
  webhooks: Array<{ type: string; url: string; state: string; attempts: number; lastStatus: number | null }> | null;
};

describe("a task's timeline (GET /tasks/api/tasks/:id/timeline)", () => {
  it("another principal gets 404, exactly like an unknown task (T-SEC-3); the owner and an admin get it", async () => {
    await start();
    const id = ((await post("/tasks/api/tools/sleep/start", ALICE, { arguments: { ms: 1 } })).json["task"] as { id: string }).id;
    const other = await get(`/tasks/api/tasks/${id}/timeline`, BOB);
    const unknown = await get(`/tasks/api/tasks/no-such-task/timeline`, BOB);
    expect(other.status).toBe(404);
    expect(other.json).toEqual(unknown.json);
    expect((await get(`/tasks/api/tasks/${id}/timeline`, ALICE)).status).toBe(200);
    expect((await get(`/tasks/api/tasks/${id}/timeline`, ADMIN)).status).toBe(200);
  });

  it("shows the status changes, the run, and each step with its duration, attempt and stored size", async () => {
    await start();
    const id = ((await post("/tasks/api/tools/steps/start", ALICE, { arguments: { count: 2, ms: 30 } })).json["task"] as { id: string }).id;
    await settled(id);
    const timeline = (await get(`/tasks/api/tasks/${id}/timeline`, ALICE)).json as unknown as Timeline;
    expect(timeline.status.map((change) => change.status)).toEqual(["working", "completed"]);
    expect(timeline.runs).toEqual([expect.objectContaining({ attempt: 1, startedBy: "created", ended: "finished" })]);
    expect(timeline.steps.map((step) => [step.name, step.attempt, step.bytes])).toEqual([
      ["step 1", 1, 1],
      ["step 2", 1, 1],
    ]);
    for (const step of timeline.steps) expect(step.ms).toBeGreaterThanOrEqual(25);
    expect(timeline.webhooks).toEqual([]);
  });

  it("shows each question with its answer to whom may see it, and hides both when the server redacts the exchange", async () => {
    for (const redact of [false, true]) {
      await start(redact ? { redact: { inputs: true } } : {});
      const id = (
        (await post("/tasks/api/tools/ask/start", ALICE, { arguments: { question: "Which colour?" } })).json["task"] as { id: string }
      ).id;
      let inputId: string | undefined;
      while (inputId === undefined) {
        inputId = (await fx!.app.engine.inspect.pendingInputs(id))[0]?.id;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      expect(
        (await post(`/tasks/api/tasks/${id}/inputs/${inputId}`, ALICE, { action: "accept", content: { answer: "teal" } })).status,
      ).toBe(200);
      await settled(id);
      const [question] = ((await get(`/tasks/api/tasks/${id}/timeline`, ALICE)).json as unknown as Timeline).questions;
      expect(question?.method).toBe("elicitation/create");
      if (redact) {
        expect(question?.params).toBe("[redacted]");
        expect(question?.answer).toEqual({ kind: "result", value: "[redacted]" });
      } else {
        expect(question?.params).toMatchObject({ message: "Which colour?" });
        expect(question?.answer).toEqual({ kind: "result", value: { action: "accept", content: { answer: "teal" } } });
      }
      await fx!.close();
      fx = undefined;
    }
  });

  it("shows each wait: a timer that fired, and an event wait still waiting, parked", async () => {
    await start();
    const nap = ((await post("/tasks/api/tools/nap/start", ALICE, { arguments: { ms: 50 } })).json["task"] as { id: string }).id;
    await settled(nap);
    expect(((await get(`/tasks/api/tasks/${nap}/timeline`, ALICE)).json as unknown as Timeline).waits).toEqual([
      expect.objectContaining({ kind: "timer", state: "timer", parked: false }),
    ]);
    const approve = (
      (await post("/tasks/api/tools/approve/start", ALICE, { arguments: { action: "ship" } })).json["task"] as { id: string }
    ).id;
    let waits: Timeline["waits"] = [];
    const deadline = Date.now() + 10_000;
    while (!waits.some((wait) => wait.parked) && Date.now() < deadline) {
      waits = ((await get(`/tasks/api/tasks/${approve}/timeline`, ALICE)).json as unknown as Timeline).waits;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(waits).toEqual([
      expect.objectContaining({ kind: "event", event: `approval/${approve}`, state: "waiting", parked: true, dueAt: null }),
    ]);
  });

  it("shows each webhook delivery of the task, its URL without its query", async () => {
    receiver = await httpReceiver("/hook");
    const secret = `whsec_${Buffer.from("a-secret-of-the-console-test-0123").toString("base64")}`;
    await start({}, captureLogger(), {
      webhooks: {
        endpoints: [{ id: "ci", url: `${receiver.url}?token=hidden-from-view`, secret, allowPrivate: ["127.0.0.1"] }],
        pollIntervalMs: 50,
      },
    });
    const id = ((await post("/tasks/api/tools/sleep/start", ALICE, { arguments: { ms: 1 } })).json["task"] as { id: string }).id;
    let webhooks: Timeline["webhooks"] = null;
    const deadline = Date.now() + 10_000;
    while (!(webhooks?.length && webhooks.every((row) => row.state === "delivered")) && Date.now() < deadline) {
      webhooks = ((await get(`/tasks/api/tasks/${id}/timeline`, ALICE)).json as unknown as Timeline).webhooks;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(webhooks).toEqual([expect.objectContaining({ type: "task.completed", url: receiver.url, state: "delivered", lastStatus: 204 })]);
  });
});
