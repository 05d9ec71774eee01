/**
 * The web API of waiting tasks over real HTTP: each summary says how a waiting task waits
 * (`waitMode`, beside the statusMessage that says for what and until when), `?parked=1` lists
 * only parked tasks (and counts only them), and an admin emits an event for a waiting task's
 * owner — a principal may not.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { staticTokenVerifier } from "../../src/http/bearer-auth.js";
import { webRoutes } from "../../src/web/web-routes.js";
import { callToolAsTask, getTask } from "../support/conformance.js";
import { startHttpServer, type HttpClient, type HttpServerFixture } from "../support/http-fixture.js";
import { webApi } from "../support/web-client.js";

const ADMIN = "web-waits-admin-6b1f";
const ALICE = "web-waits-alice-2c9e";

let fx: HttpServerFixture;
let alice: HttpClient;

beforeAll(async () => {
  const verifier = staticTokenVerifier(new Map([[ALICE, "alice"]]));
  fx = await startHttpServer({
    app: { rateLimit: "off" },
    http: { verifier },
    routes: (app) => webRoutes(app, { adminTokens: [ADMIN], verifier }),
  });
  alice = await fx.connect({ token: ALICE });
}, 30_000);

afterAll(async () => {
  await fx?.close();
});

async function parked(taskId: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await fx.app.engine.inspect.task(taskId))?.waitMode !== "parked") {
    if (Date.now() > deadline) throw new Error(`${taskId} never parked`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const post = (path: string, token: string, body: unknown) => webApi(fx.url, path, token, { method: "POST", body: JSON.stringify(body) });

describe("the web API of waiting tasks", { timeout: 30_000 }, () => {
  it("shows waitMode and the statusMessage of what each waits for; ?parked=1 lists and counts only parked tasks", async () => {
    const approving = (await callToolAsTask(alice.client, "approve", { action: "publish" })).task.taskId;
    const napping = (await callToolAsTask(alice.client, "nap", { ms: 3_600_000 })).task.taskId;
    const running = (await callToolAsTask(alice.client, "sleep", { ms: 60_000 })).task.taskId;
    await parked(approving);
    await parked(napping);

    const all = await webApi(fx.url, "/tasks/api/tasks", ALICE);
    const byId = new Map((all.json["tasks"] as Array<Record<string, unknown>>).map((t) => [t["id"], t]));
    expect(byId.get(approving)).toMatchObject({ waitMode: "parked", statusMessage: `Waiting for approval/${approving}` });
    expect(byId.get(napping)).toMatchObject({
      waitMode: "parked",
      statusMessage: expect.stringMatching(/^Sleeping until \d{4}-\d\d-\d\dT/),
    });
    expect(byId.get(running)).toMatchObject({ waitMode: null, status: "working" });

    const onlyParked = await webApi(fx.url, "/tasks/api/tasks?parked=1", ALICE);
    const ids = (onlyParked.json["tasks"] as Array<{ id: string }>).map((t) => t.id);
    expect(ids).toContain(approving);
    expect(ids).toContain(napping);
    expect(ids).not.toContain(running);
    expect((onlyParked.json["counts"] as Record<string, number>)["working"]).toBe(ids.length);
    expect((await webApi(fx.url, "/tasks/api/tasks?parked=maybe", ALICE)).status).toBe(400);
    await fx.app.engine.cancel(napping, { owner: "local|alice" });
    await fx.app.engine.cancel(running, { owner: "local|alice" });
    await fx.app.emit(`approval/${approving}`, { approved: true }, { owner: "local|alice" });
  });

  it("an admin emits an event for the task's owner and wakes it; a principal gets 403, a bad name 400", async () => {
    const taskId = (await callToolAsTask(alice.client, "approve", { action: "merge" })).task.taskId;
    await parked(taskId);
    const refused = await post(`/tasks/api/tasks/${taskId}/events`, ALICE, { name: `approval/${taskId}`, payload: { approved: true } });
    expect(refused.status).toBe(403);
    const badName = await post(`/tasks/api/tasks/${taskId}/events`, ADMIN, { name: "/nope", payload: {} });
    expect(badName.status).toBe(400);
    expect((await fx.app.engine.inspect.task(taskId))?.waitMode).toBe("parked");
    const emitted = await post(`/tasks/api/tasks/${taskId}/events`, ADMIN, {
      name: `approval/${taskId}`,
      payload: { approved: true, by: "op" },
    });
    expect(emitted.status).toBe(200);
    expect(emitted.json).toEqual({ seq: expect.any(Number), woken: 1 });
    const deadline = Date.now() + 10_000;
    while ((await getTask(alice.client, taskId)).status !== "completed") {
      if (Date.now() > deadline) throw new Error("the approval never completed");
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  });
});
