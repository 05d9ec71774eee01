/**
 * `POST /events/{name}` on a real serveHttp server (bearer tokens for alice and mallory, the admin
 * token): the demo tool `approve` parked in both eras — created through a 2025-11-25 session and
 * through a 2026-07-28 request, one table of cases — is woken by its owner's event or an admin's
 * named one, never by another principal's, and every bad request gets its clear 4xx.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { staticTokenVerifier } from "../../src/http/bearer-auth.js";
import { DEFAULT_MAX_EVENT_BYTES } from "../../src/runtime/engine/task-signals.js";
import { callToolAsTask, getTask, taskResult } from "../support/conformance.js";
import { startHttpServer, type HttpClient, type HttpServerFixture } from "../support/http-fixture.js";
import { statelessResult } from "../support/stateless-client.js";

const ALICE = { token: "tok-alice-events-31c9", owner: "local|alice" };
const MALLORY = { token: "tok-mallory-events-8e02", owner: "local|mallory" };
const ADMIN_TOKEN = "admin-events-token-c4d7e1";

let fx: HttpServerFixture;
let alice: HttpClient;

beforeAll(async () => {
  const verifier = staticTokenVerifier(
    new Map([
      [ALICE.token, "alice"],
      [MALLORY.token, "mallory"],
    ]),
  );
  fx = await startHttpServer({ app: { rateLimit: "off" }, http: { verifier, adminTokens: [ADMIN_TOKEN] } });
  alice = await fx.connect({ token: ALICE.token });
}, 30_000);

afterAll(async () => {
  await fx?.close();
});

/** An outcome as the requestor reads it: status and the result's text. */
interface Outcome {
  status: string;
  text: string;
}

interface EraCase {
  era: string;
  /** A result with isError: `failed` in 2025-11-25 (T-LIFE-4), `completed` carrying it in 2026-07-28. */
  refusedStatus: string;
  create(action: string): Promise<string>;
  outcome(taskId: string): Promise<Outcome>;
}

const textOf = (result: Record<string, unknown> | undefined): string =>
  ((result?.["content"] as Array<{ text?: string }> | undefined) ?? []).map((c) => c.text ?? "").join("");

const ERAS: EraCase[] = [
  {
    era: "2025-11-25",
    refusedStatus: "failed",
    async create(action) {
      const created = await callToolAsTask(alice.client, "approve", { action }, { ttl: 60_000 });
      return created.task.taskId;
    },
    async outcome(taskId) {
      const task = await getTask(alice.client, taskId);
      if (task.status === "working" || task.status === "input_required") return { status: task.status, text: "" };
      const result = await taskResult(alice.client, taskId);
      return { status: task.status, text: textOf(result as Record<string, unknown>) };
    },
  },
  {
    era: "2026-07-28",
    refusedStatus: "completed",
    async create(action) {
      const created = await statelessResult(fx.url, "tools/call", { name: "approve", arguments: { action } }, { token: ALICE.token });
      expect(created["resultType"]).toBe("task");
      return String(created["taskId"]);
    },
    async outcome(taskId) {
      const task = await statelessResult(fx.url, "tasks/get", { taskId }, { token: ALICE.token });
      return { status: String(task["status"]), text: textOf(task["result"] as Record<string, unknown> | undefined) };
    },
  },
];

/** POSTs an event; `path` is the part after /events/ (empty: `POST /events`, a batch). */
async function emit(path: string, body: string | undefined, headers: Record<string, string> = {}) {
  const response = await fetch(new URL(path === "" ? "/events" : `/events/${path}`, fx.url), {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    ...(body !== undefined && { body }),
  });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as Record<string, unknown> & { error?: { message: string } } };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Resolves once the task is parked: its handler unloaded, waiting for its event. */
async function parked(taskId: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await fx.app.engine.inspect.task(taskId))?.waitMode !== "parked") {
    if (Date.now() > deadline) throw new Error(`task ${taskId} never parked`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function settled(era: EraCase, taskId: string): Promise<Outcome> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const outcome = await era.outcome(taskId);
    if (outcome.status !== "working" && outcome.status !== "input_required") return outcome;
    if (Date.now() > deadline) throw new Error(`task ${taskId} is still ${outcome.status}`);
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
}

describe.each(ERAS)("POST /events/{name} wakes an approve task created in $era", { timeout: 30_000 }, (era) => {
  it("is refused for another owner without the admin token, and the task stays parked; the admin token names the owner and approves", async () => {
    const taskId = await era.create("deploy v2");
    await parked(taskId);

    // Mallory's own event of that name belongs to her: it wakes nothing of alice's.
    const own = await emit(`approval/${taskId}`, '{"approved": true, "by": "mallory"}', bearer(MALLORY.token));
    expect(own).toEqual({ status: 200, body: { seq: expect.any(Number), woken: 0 } });
    // Naming alice as the owner needs the admin token.
    const named = await emit(`approval/${taskId}?owner=${encodeURIComponent(ALICE.owner)}`, '{"approved": true}', bearer(MALLORY.token));
    expect(named.status).toBe(403);
    expect(named.body.error?.message).toMatch(/another owner needs the admin token/);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await era.outcome(taskId)).toEqual({ status: "working", text: "" });
    expect((await fx.app.engine.inspect.task(taskId))?.waitMode).toBe("parked");

    const approved = await emit(
      `approval/${taskId}?owner=${encodeURIComponent(ALICE.owner)}`,
      '{"approved": true, "by": "ops"}',
      bearer(ADMIN_TOKEN),
    );
    expect(approved).toEqual({ status: 200, body: { seq: expect.any(Number), woken: 1 } });
    expect(await settled(era, taskId)).toEqual({ status: "completed", text: "approved by ops: deploy v2" });
  });

  it("takes the owner's own event, the name's slash escaped or not; a denial is the tool's error result", async () => {
    const first = await era.create("drop table");
    const second = await era.create("rotate keys");
    await parked(first);
    await parked(second);
    const denied = await emit(`approval%2F${first}`, '{"approved": false, "by": "carol"}', bearer(ALICE.token));
    expect(denied).toEqual({ status: 200, body: { seq: expect.any(Number), woken: 1 } });
    expect(await settled(era, first)).toEqual({ status: era.refusedStatus, text: "denied by carol: drop table" });
    const approved = await emit(`approval/${second}`, '{"approved": true}', bearer(ALICE.token));
    expect(approved.body).toMatchObject({ woken: 1 });
    expect(await settled(era, second)).toEqual({ status: "completed", text: "approved by someone: rotate keys" });
  });
});

/** POSTs a batch to /events: `{events: [...]}`. */
async function emitBatch(events: unknown, headers: Record<string, string> = {}) {
  return emit("", JSON.stringify({ events }), headers);
}

describe.each(ERAS)("POST /events (a batch) wakes approve tasks created in $era", { timeout: 30_000 }, (era) => {
  it("emits every event of the batch for the caller's owner in one write, answering each one's report in order", async () => {
    const first = await era.create("ship a");
    const second = await era.create("ship b");
    await parked(first);
    await parked(second);
    const batch = await emitBatch(
      [
        { name: `approval/${first}`, payload: { approved: true, by: "dana" } },
        { name: "deploys/unrelated" },
        { name: `approval/${second}`, payload: { approved: false, by: "dana" } },
      ],
      bearer(ALICE.token),
    );
    expect(batch).toEqual({
      status: 200,
      body: {
        events: [
          { seq: expect.any(Number), woken: 1 },
          { seq: expect.any(Number), woken: 0 },
          { seq: expect.any(Number), woken: 1 },
        ],
        woken: 2,
      },
    });
    const seqs = (batch.body["events"] as Array<{ seq: number }>).map((e) => e.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(await settled(era, first)).toEqual({ status: "completed", text: "approved by dana: ship a" });
    expect(await settled(era, second)).toEqual({ status: era.refusedStatus, text: "denied by dana: ship b" });
  });

  it("a batch with one bad event emits none of them; another principal's batch wakes nothing of alice's", async () => {
    const taskId = await era.create("rotate");
    await parked(taskId);
    const refused = await emitBatch([{ name: `approval/${taskId}`, payload: { approved: true } }, { name: "-bad" }], bearer(ALICE.token));
    expect(refused.status).toBe(400);
    expect(refused.body.error?.message).toMatch(/^events\[1\]: An event name is 1–200 letters/);
    const theirs = await emitBatch([{ name: `approval/${taskId}`, payload: { approved: true } }], bearer(MALLORY.token));
    expect(theirs.body).toEqual({ events: [{ seq: expect.any(Number), woken: 0 }], woken: 0 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await fx.app.engine.inspect.task(taskId))?.waitMode).toBe("parked");
    const approved = await emitBatch([{ name: `approval/${taskId}`, payload: { approved: true, by: "ops" } }], bearer(ALICE.token));
    expect(approved.body).toMatchObject({ woken: 1 });
    expect(await settled(era, taskId)).toEqual({ status: "completed", text: "approved by ops: rotate" });
  });
});

describe("POST /events (a batch) refusals", () => {
  it("400 for a body that is not {events: [objects]}, and for more than 1,000 events", async () => {
    for (const body of ["[]", '{"events": {}}', '{"events": [1]}', "{nope", ""]) {
      const response = await emit("", body, bearer(ALICE.token));
      expect(response.status, body).toBe(400);
      expect(response.body.error?.message).toMatch(/must be \{"events"/);
    }
    const tooMany = await emitBatch(
      Array.from({ length: 1001 }, (_, i) => ({ name: `n${i}` })),
      bearer(ALICE.token),
    );
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error?.message).toMatch(/At most 1000 events/);
  });

  it("413 for a payload over maxEventBytes; 401 without a token", async () => {
    const big = await emitBatch([{ name: "x", payload: "x".repeat(DEFAULT_MAX_EVENT_BYTES) }], bearer(ALICE.token));
    expect(big.status).toBe(413);
    expect(big.body.error?.message).toMatch(/^events\[0\]: The event payload exceeds/);
    expect((await emitBatch([{ name: "x" }])).status).toBe(401);
  });

  it("an empty batch emits nothing", async () => {
    expect(await emitBatch([], bearer(ALICE.token))).toEqual({ status: 200, body: { events: [], woken: 0 } });
  });
});

describe("POST /events/{name} refusals", () => {
  it("401 without a token where the MCP endpoint requires one, with the same challenge", async () => {
    const response = await emit("deploys/finished", "{}");
    expect(response.status).toBe(401);
    expect(response.body.error?.message).toMatch(/bearer token is required/);
    const wrong = await emit("deploys/finished", "{}", bearer("not-a-token"));
    expect(wrong.status).toBe(401);
  });

  it("400 with a JSON error for a bad name or a body that is no JSON", async () => {
    const badName = await emit("-starts-with-a-dash", "{}", bearer(ALICE.token));
    expect(badName.status).toBe(400);
    expect(badName.body.error?.message).toMatch(/event name is 1–200 letters/);
    const tooLong = await emit("x".repeat(201), "{}", bearer(ALICE.token));
    expect(tooLong.status).toBe(400);
    const notJson = await emit("deploys/finished", "{nope", bearer(ALICE.token));
    expect(notJson.status).toBe(400);
    expect(notJson.body.error?.message).toMatch(/must be JSON/);
  });

  it("413 for a payload over maxEventBytes, and an empty body is the payload null", async () => {
    const big = JSON.stringify({ blob: "x".repeat(DEFAULT_MAX_EVENT_BYTES) });
    const refused = await emit("deploys/finished", big, bearer(ALICE.token));
    expect(refused.status).toBe(413);
    expect(refused.body.error?.message).toMatch(/exceeds 65536 bytes/);
    const empty = await emit("deploys/finished", undefined, bearer(ALICE.token));
    expect(empty).toEqual({ status: 200, body: { seq: expect.any(Number), woken: 0 } });
  });

  it("403 from the Origin check, as on every route", async () => {
    const response = await emit("deploys/finished", "{}", { ...bearer(ALICE.token), origin: "https://evil.example" });
    expect(response.status).toBe(403);
  });

  it("405 for a GET", async () => {
    const response = await fetch(new URL("/events/deploys/finished", fx.url), { headers: bearer(ALICE.token) });
    expect(response.status).toBe(405);
    await response.body?.cancel();
  });
});
