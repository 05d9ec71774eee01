/**
 * The web API's queue control over real HTTP (queue-control.ts): who may pause, resume, purge and
 * retry (admins; anyone else 403), clear errors (an unknown tool is 404 naming it), what each
 * action does to the tasks, and the audit line each one writes.
 */
import { afterEach, describe, expect, it } from "vitest";
import { staticTokenVerifier } from "../../src/http/bearer-auth.js";
import type { TokenGrant } from "../../src/http/token-file.js";
import { webRoutes } from "../../src/web/web-routes.js";
import { callToolAsTask, captureLogger, getTask } from "../support/conformance.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { webApi } from "../support/web-client.js";

const ADMIN = "admin-token-0123456789";
const TOKENS = new Map<string, string | TokenGrant>([
  ["tok-alice-secret", "alice"],
  ["tok-ops-secret", { principal: "ops", admin: true }],
]);

let fx: HttpServerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function start(logger = captureLogger()): Promise<HttpServerFixture> {
  const verifier = staticTokenVerifier(TOKENS);
  fx = await startHttpServer({
    app: { logger },
    http: { verifier },
    routes: (app) => webRoutes(app, { adminTokens: [ADMIN], verifier }),
  });
  return fx;
}

const post = (path: string, token?: string) => webApi((fx as HttpServerFixture).url, path, token, { method: "POST" });
const get = (path: string, token?: string) => webApi((fx as HttpServerFixture).url, path, token);

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("queue control: who may act", () => {
  it("refuses every action to a principal who is no admin (403), and answers 401 without a token", async () => {
    await start();
    for (const path of [
      "/tasks/api/queues/sleep/pause",
      "/tasks/api/queues/sleep/resume",
      "/tasks/api/queues/sleep/purge",
      "/tasks/api/purge?tool=sleep",
      "/tasks/api/retry-failed",
    ]) {
      const refused = await post(path, "tok-alice-secret");
      expect(refused.status, path).toBe(403);
      expect(refused.json.error?.message, path).toMatch(/^Only an admin can /);
      expect((await post(path)).status, path).toBe(401);
    }
    expect(fx?.app.engine.isPaused("sleep")).toBe(false);
  });

  it("answers 404 naming an unknown tool, for the admin token and a token-file admin alike", async () => {
    await start();
    for (const token of [ADMIN, "tok-ops-secret"]) {
      for (const action of ["pause", "resume", "purge"]) {
        const answer = await post(`/tasks/api/queues/no-such-tool/${action}`, token);
        expect(answer.status).toBe(404);
        expect(answer.json.error?.message).toBe('Unknown tool: "no-such-tool" is not a tool this server serves');
      }
    }
  });

  it("answers 400 for a malformed filter of a purge or a retry", async () => {
    await start();
    for (const path of ["/tasks/api/purge?status=nonsense", "/tasks/api/retry-failed?from=not-a-date"]) {
      const answer = await post(path, ADMIN);
      expect(answer.status, path).toBe(400);
      expect(answer.json.error?.message, path).toMatch(/^(Unknown status "nonsense"|Invalid from)/);
    }
  });
});

describe("queue control: what each action does", () => {
  it("a pause queues new tasks with a status message that says so, lists the tool as paused, and a resume starts them", async () => {
    const logger = captureLogger();
    const server = await start(logger);
    const alice = await server.connect({ token: "tok-alice-secret" });
    const paused = await post("/tasks/api/queues/sleep/pause", "tok-ops-secret");
    expect(paused.status).toBe(200);
    expect(paused.json).toEqual({ tool: "sleep", paused: true, changed: true });
    expect((await post("/tasks/api/queues/sleep/pause", ADMIN)).json).toEqual({ tool: "sleep", paused: true, changed: false });

    const created = await callToolAsTask(alice.client, "sleep", { ms: 1 });
    expect(created.task.status).toBe("working");
    expect(created.task.statusMessage).toBe("queued: the tool sleep is paused; it starts once an operator resumes the tool");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await getTask(alice.client, created.task.taskId)).statusMessage).toMatch(/the tool sleep is paused/);

    const queues = await get("/tasks/api/queues", ADMIN);
    const sleep = (queues.json["tools"] as Array<Record<string, unknown>>).find((tool) => tool["name"] === "sleep");
    expect(sleep).toMatchObject({ name: "sleep", served: true, paused: true, pausedBy: "ops", queued: 1 });
    // Whether a tool is paused is no secret; who paused it is for admins.
    const seen = (await get("/tasks/api/queues", "tok-alice-secret")).json["tools"] as Array<Record<string, unknown>>;
    expect(seen.find((tool) => tool["name"] === "sleep")).toEqual({ name: "sleep", served: true, paused: true, queued: 1 });

    expect((await post("/tasks/api/queues/sleep/resume", ADMIN)).json).toEqual({ tool: "sleep", paused: false, changed: true });
    await until(
      () => getTask(alice.client, created.task.taskId),
      (task) => task.status === "completed",
    );
    const audit = logger.entries.map((entry) => entry.obj).filter((obj) => obj["audit"] !== undefined);
    expect(audit).toContainEqual(expect.objectContaining({ audit: "tool_pause_requested", tool: "sleep", principal: "ops", via: "web" }));
    expect(audit).toContainEqual(expect.objectContaining({ audit: "tool_paused", tool: "sleep", principal: "ops", changed: true }));
    expect(audit).toContainEqual(expect.objectContaining({ audit: "tool_resume_requested", tool: "sleep", principal: "admin" }));
    expect(audit).toContainEqual(expect.objectContaining({ audit: "tool_resumed", tool: "sleep", principal: "admin", changed: true }));
  });

  it("a purge cancels the queued tasks of the tool (saying who purged them) and leaves running ones and other tools alone", async () => {
    const logger = captureLogger();
    const server = await start(logger);
    const alice = await server.connect({ token: "tok-alice-secret" });
    const running = await callToolAsTask(alice.client, "sleep", { ms: 60_000 });
    await until(
      async () => server.app.engine.inspect.isQueued(running.task.taskId),
      (queued) => queued === false,
    );
    await post("/tasks/api/queues/sleep/pause", ADMIN);
    const queued = [await callToolAsTask(alice.client, "sleep", { ms: 1 }), await callToolAsTask(alice.client, "sleep", { ms: 1 })];
    await post("/tasks/api/queues/batch/pause", ADMIN);
    const other = await callToolAsTask(alice.client, "batch", { ms: 1 });

    const purged = await post("/tasks/api/queues/sleep/purge", "tok-ops-secret");
    expect(purged.status).toBe(200);
    expect(purged.json["purged"]).toBe(2);
    for (const { task } of queued) {
      const after = await getTask(alice.client, task.taskId);
      expect(after.status).toBe("cancelled");
      expect(after.statusMessage).toBe("Purged from the queue by ops");
    }
    expect((await getTask(alice.client, running.task.taskId)).status).toBe("working");
    expect((await getTask(alice.client, other.task.taskId)).status).toBe("working");

    // The filter's purge: what the view shows (here, the batch tool's queue).
    const filtered = await post("/tasks/api/purge?tool=batch", ADMIN);
    expect(filtered.json["purged"]).toBe(1);
    expect((await getTask(alice.client, other.task.taskId)).statusMessage).toBe("Purged from the queue by admin");
    expect(logger.entries.map((entry) => entry.obj)).toContainEqual(
      expect.objectContaining({ audit: "purge_requested", principal: "ops", count: 2, filter: { name: "sleep" } }),
    );
  });

  it("a bulk retry re-runs every failed task of the filter as new tasks linked to the old ones, and only those", async () => {
    const logger = captureLogger();
    const server = await start(logger);
    const alice = await server.connect({ token: "tok-alice-secret" });
    const failed = [
      await callToolAsTask(alice.client, "fail", { message: "first" }),
      await callToolAsTask(alice.client, "fail", { message: "second" }),
    ];
    const ok = await callToolAsTask(alice.client, "sleep", { ms: 1 });
    for (const { task } of [...failed, ok]) {
      await until(
        () => getTask(alice.client, task.taskId),
        (t) => t.status !== "working",
      );
    }
    const answer = await post("/tasks/api/retry-failed?tool=fail", ADMIN);
    expect(answer.status).toBe(200);
    expect(answer.json["retried"]).toBe(2);
    const results = answer.json["results"] as Array<{ id: string; task: { id: string; rerunOf: string; owner: string; tool: string } }>;
    expect(results.map((result) => result.id).sort()).toEqual(failed.map(({ task }) => task.taskId).sort());
    for (const result of results) {
      expect(result.task.rerunOf).toBe(result.id);
      expect(result.task.tool).toBe("fail");
      expect(result.task.owner).toBe((await server.app.engine.inspect.task(result.id))?.owner);
      // The new task is the owner's: the requestor reaches it.
      expect((await getTask(alice.client, result.task.id)).taskId).toBe(result.task.id);
    }
    // A filter whose statuses leave out failed retries nothing.
    expect((await post("/tasks/api/retry-failed?status=completed", ADMIN)).json).toEqual({ retried: 0, results: [], more: false });
    expect(logger.entries.map((entry) => entry.obj)).toContainEqual(
      expect.objectContaining({ audit: "bulk_rerun_requested", principal: "admin", count: 2 }),
    );
    expect(logger.entries.filter((entry) => entry.obj["audit"] === "rerun_requested")).toHaveLength(2);
  });
});
