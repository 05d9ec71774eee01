/**
 * The web API of webhook deliveries over real HTTP: admins list every delivery and redeliver to a
 * URL; a principal sees and redelivers only its own tasks' deliveries; URLs are shown without
 * their query and no secret is ever served.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { staticTokenVerifier } from "../../src/http/bearer-auth.js";
import { webRoutes } from "../../src/web/web-routes.js";
import { callToolAsTask } from "../support/conformance.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { httpReceiver, type HttpReceiver } from "../support/http-receiver.js";
import { webApi } from "../support/web-client.js";

const ADMIN = "admin-token-0123456789";
const secret = `whsec_${randomBytes(24).toString("base64")}`;
let fx: HttpServerFixture | undefined;
let target: HttpReceiver | undefined;
afterEach(async () => {
  await fx?.close();
  await target?.close();
});

async function start(): Promise<HttpServerFixture> {
  target = await httpReceiver("/hook");
  const verifier = staticTokenVerifier(
    new Map([
      ["tok-alice-secret", "alice"],
      ["tok-bob-secret", "bob"],
    ]),
  );
  fx = await startHttpServer({
    app: {
      webhooks: {
        endpoints: [{ id: "ci", url: `${target.url}?token=hidden-from-view`, secret, allowPrivate: ["127.0.0.1"] }],
        pollIntervalMs: 50,
      },
    },
    http: { verifier },
    routes: (app) => webRoutes(app, { adminTokens: [ADMIN], verifier }),
  });
  return fx;
}

async function deliveredFor(server: HttpServerFixture, taskId: string): Promise<Array<Record<string, unknown>>> {
  for (;;) {
    const answer = await webApi(server.url, `/tasks/api/webhooks?taskId=${taskId}`, ADMIN);
    const rows = answer.json["deliveries"] as Array<Record<string, unknown>>;
    if (rows.length > 0 && rows.every((row) => row["state"] === "delivered")) return rows;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("web API: webhook deliveries", () => {
  it("lists a task's deliveries to its owner and to admins, never to another principal, and redelivers them", async () => {
    const server = await start();
    const alice = await server.connect({ token: "tok-alice-secret" });
    const created = await callToolAsTask(alice.client, "sleep", { ms: 1 });
    const [row] = await deliveredFor(server, created.task.taskId);
    expect(row).toMatchObject({ type: "task.completed", endpoint: "ci", attempts: 1, lastStatus: 204, url: target!.url });
    const own = await webApi(server.url, `/tasks/api/webhooks?taskId=${created.task.taskId}`, "tok-alice-secret");
    expect((own.json["deliveries"] as unknown[]).length).toBe(1);
    expect((await webApi(server.url, `/tasks/api/webhooks?taskId=${created.task.taskId}`, "tok-bob-secret")).status).toBe(404);
    expect((await webApi(server.url, "/tasks/api/webhooks", "tok-alice-secret")).status).toBe(403);
    const all = await webApi(server.url, "/tasks/api/webhooks", ADMIN);
    expect(JSON.stringify(all.json)).not.toContain("hidden-from-view");
    expect(JSON.stringify(all.json)).not.toContain(secret.slice(6));

    const post = (token: string, body: unknown) =>
      webApi(server.url, "/tasks/api/webhooks/redeliver", token, { method: "POST", body: JSON.stringify(body) });
    expect((await post("tok-bob-secret", { id: row!["id"] })).status).toBe(404);
    expect((await post("tok-alice-secret", { url: target!.url })).status).toBe(403);
    expect((await post("tok-alice-secret", { id: row!["id"] })).json).toEqual({ queued: 1 });
    await target!.waitFor(2);
    expect(target!.received[1]!.headers["webhook-id"]).toBe(row!["id"]);
    expect((await post(ADMIN, { nothing: true })).status).toBe(400);
  });
});
