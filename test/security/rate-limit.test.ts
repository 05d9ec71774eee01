/**
 * Per-caller limits as a client meets them (T-SEC-4, T-SEC-5), over real Streamable HTTP with the
 * SDK client and an injected clock (no sleeps): the token bucket of task operations, and the
 * failed-lookup guard that stops id enumeration. A refusal is -32029 with
 * `data: { name, limit, retryAfterMs }`; what was accepted before it is never lost.
 */
import { randomUUID } from "node:crypto";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, it } from "vitest";
import { staticTokenVerifier } from "../../src/http/bearer-auth.js";
import type { HttpOptions } from "../../src/http/http-server.js";
import type { TaskServerOptions } from "../../src/mcp/task-server.js";
import { callToolAsTask, cancelTask, captureLogger, expectRpcError, getTask, listTasks, taskResult } from "../support/conformance.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { parseSamples, valueOf } from "../support/prometheus.js";

const RATE_LIMITED = -32029;
const NOT_FOUND = "Failed to retrieve task: Task not found";

let fx: HttpServerFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

function manualClock(): { now: () => number; advance(ms: number): void } {
  let t = Date.now();
  return { now: () => t, advance: (ms) => void (t += ms) };
}

const TOKENS = new Map([
  ["tok-alice-31d7", "alice"],
  ["tok-bob-9c02", "bob"],
  ["tok-mallory-5e88", "mallory"],
]);

async function start(
  app: Partial<TaskServerOptions>,
  http: HttpOptions = { verifier: staticTokenVerifier(TOKENS) },
): Promise<HttpServerFixture> {
  fx = await startHttpServer({ app, http });
  return fx;
}

/** A fetch that sends `X-Forwarded-For: address`, as a proxy in front of the server would. */
function forwardedFor(address: string): FetchLike {
  return (url, init) => {
    const headers = new Headers(init?.headers);
    headers.set("x-forwarded-for", address);
    return fetch(url, { ...init, headers });
  };
}

async function rejections(limit: string): Promise<number> {
  const text = await (await fetch(new URL("/metrics", fx!.url))).text();
  return valueOf(parseSamples(text), "mcp_tasks_limit_rejections_total", { limit });
}

describe("T-SEC-4: task operations per caller (token bucket)", () => {
  it("refuses every task operation past the burst with -32029 and data {name, limit, retryAfterMs}", async () => {
    const clock = manualClock();
    await start({ now: clock.now, rateLimit: { perSecond: 1, burst: 3 }, failedLookups: "off" });
    const alice = await fx!.connect({ token: "tok-alice-31d7" });
    const { task } = await callToolAsTask(alice.client, "sleep", { ms: 60_000 });
    await getTask(alice.client, task.taskId);
    await getTask(alice.client, task.taskId);

    // One at a time, so that no refusal is left unawaited while an earlier one is checked.
    const refusals = [
      () => getTask(alice.client, task.taskId), // answered as plain JSON
      () => taskResult(alice.client, task.taskId), // answered by the SDK's transport
      () => listTasks(alice.client),
      () => cancelTask(alice.client, task.taskId),
      () => callToolAsTask(alice.client, "sleep", { ms: 1 }),
    ];
    for (const refused of refusals) {
      const error = await expectRpcError(refused(), RATE_LIMITED, /rate limit/i);
      expect(error.data).toEqual({ name: "task_operations", limit: 1, retryAfterMs: 1000 });
    }
    expect(await rejections("task_operations")).toBe(5);
    // The refused cancel did nothing.
    expect((await fx!.app.engine.store.get(task.taskId, { any: true }))?.status).toBe("working");
  });

  it("lets the caller in again as the bucket refills at the sustained rate", async () => {
    const clock = manualClock();
    await start({ now: clock.now, rateLimit: { perSecond: 2, burst: 2 }, failedLookups: "off" });
    const alice = await fx!.connect({ token: "tok-alice-31d7" });
    const { task } = await callToolAsTask(alice.client, "sleep", { ms: 60_000 });
    await getTask(alice.client, task.taskId);
    const refused = await expectRpcError(getTask(alice.client, task.taskId), RATE_LIMITED);
    expect(refused.data).toMatchObject({ retryAfterMs: 500 });

    clock.advance(500);
    expect((await getTask(alice.client, task.taskId)).status).toBe("working");
    await expectRpcError(getTask(alice.client, task.taskId), RATE_LIMITED);
  });

  it("keeps one bucket per owner: alice over her rate leaves bob's operations untouched", async () => {
    await start({ now: manualClock().now, rateLimit: { perSecond: 1, burst: 2 }, failedLookups: "off" });
    const alice = await fx!.connect({ token: "tok-alice-31d7" });
    const bob = await fx!.connect({ token: "tok-bob-9c02" });
    await listTasks(alice.client);
    await listTasks(alice.client);
    await expectRpcError(listTasks(alice.client), RATE_LIMITED);

    const { task } = await callToolAsTask(bob.client, "sleep", { ms: 60_000 });
    expect((await getTask(bob.client, task.taskId)).taskId).toBe(task.taskId);
  });

  it("counts anonymous callers per address; X-Forwarded-For names the address only behind trustProxy", async () => {
    const limits = { now: manualClock().now, rateLimit: { perSecond: 1, burst: 1 }, failedLookups: "off" } as const;
    await start(limits, { trustProxy: true });
    const first = await fx!.connect({ fetch: forwardedFor("198.51.100.1") });
    const second = await fx!.connect({ fetch: forwardedFor("198.51.100.2") });
    await listTasks(first.client);
    await expectRpcError(listTasks(first.client), RATE_LIMITED);
    await listTasks(second.client); // another address, another bucket

    await fx!.close();
    // Without trustProxy the header is the client's word: both share the socket's address.
    await start(limits, {});
    const honest = await fx!.connect({ fetch: forwardedFor("198.51.100.1") });
    const spoofing = await fx!.connect({ fetch: forwardedFor("203.0.113.99") });
    await listTasks(honest.client);
    await expectRpcError(listTasks(spoofing.client), RATE_LIMITED);
  });

  it("counts a tasks/result once when the plain-JSON path hands it to a stream (a task that asks its requestor something)", async () => {
    await start(
      { now: manualClock().now, rateLimit: { perSecond: 1, burst: 2 }, failedLookups: "off" },
      { verifier: staticTokenVerifier(TOKENS), sessions: "shared" },
    );
    const alice = await fx!.connect({ token: "tok-alice-31d7" });
    alice.client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { answer: "yes" } }));
    const { task } = await callToolAsTask(alice.client, "ask", { question: "ok?" });
    // Two operations, two tokens: the create and the one tasks/result, though two paths served it.
    expect((await taskResult(alice.client, task.taskId)).content).toEqual([{ type: "text", text: "answer: yes" }]);
    await expectRpcError(getTask(alice.client, task.taskId), RATE_LIMITED);
  });

  it("counts session-bound callers without auth per address too: a new session brings no new bucket (bind: session)", async () => {
    await start({ now: manualClock().now, rateLimit: { perSecond: 1, burst: 1 }, failedLookups: "off", bind: "session" }, {});
    const first = await fx!.connect();
    const second = await fx!.connect();
    await listTasks(first.client);
    await expectRpcError(listTasks(first.client), RATE_LIMITED);
    await expectRpcError(listTasks(second.client), RATE_LIMITED);
  });

  it("lets tasks accepted before the limit finish normally, and hands over their results once the caller may ask again", async () => {
    const clock = manualClock();
    await start({ now: clock.now, rateLimit: { perSecond: 1, burst: 3 }, failedLookups: "off" });
    const alice = await fx!.connect({ token: "tok-alice-31d7" });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await callToolAsTask(alice.client, "sleep", { ms: 20 + i })).task.taskId);
    await expectRpcError(callToolAsTask(alice.client, "sleep", { ms: 1 }), RATE_LIMITED);

    // Status notifications are not task operations: they keep coming while alice is refused.
    for (const id of ids) {
      await alice.received.waitFor(
        (r) =>
          r.message.method === "notifications/tasks/status" &&
          r.message.params?.["taskId"] === id &&
          r.message.params["status"] === "completed",
        `task ${id} to complete`,
      );
    }
    // The refused call created nothing.
    expect((await fx!.app.engine.store.list("local|alice", null, 10)).map((t) => t.id).sort()).toEqual([...ids].sort());
    clock.advance(3000);
    for (const [i, id] of ids.entries()) {
      expect((await taskResult(alice.client, id)).content).toEqual([{ type: "text", text: `slept ${20 + i} ms` }]);
    }
  });
});

describe("T-SEC-4/T-SEC-5: failed lookups (enumeration)", () => {
  /** One hex digit of `id` changed: the nearest miss there is. */
  const nearMiss = (id: string, position: number): string => {
    const hex = [...id].map((c, i) => (/[0-9a-f]/.test(c) ? i : -1)).filter((i) => i >= 0);
    const at = hex[position % hex.length]!;
    return id.slice(0, at) + ((parseInt(id[at]!, 16) + 1) % 16).toString(16) + id.slice(at + 1);
  };

  it("answers 25 random and near-miss ids -32602 up to the allowance of 20, then -32029 for every id the prober does not own, while her own tasks stay hers", async () => {
    const clock = manualClock();
    const logger = captureLogger();
    await start({ now: clock.now, logger, rateLimit: "off" });
    const alice = await fx!.connect({ token: "tok-alice-31d7" });
    const mallory = await fx!.connect({ token: "tok-mallory-5e88" });
    const victim = (await callToolAsTask(alice.client, "sleep", { ms: 60_000 })).task.taskId;
    const own = (await callToolAsTask(mallory.client, "sleep", { ms: 60_000 })).task.taskId;
    const ownDone = (await callToolAsTask(mallory.client, "sleep", { ms: 0 })).task.taskId;

    const probes = Array.from({ length: 25 }, (_, i) => (i % 2 === 0 ? randomUUID() : nearMiss(victim, i)));
    const answers: number[] = [];
    for (const id of probes) {
      const error = await expectRpcError(getTask(mallory.client, id), answers.length < 20 ? -32602 : RATE_LIMITED);
      if (error.code === -32602) expect(error.message).toContain(NOT_FOUND);
      answers.push(error.code);
    }
    expect(answers).toEqual([...Array<number>(20).fill(-32602), ...Array<number>(5).fill(RATE_LIMITED)]);

    // Cooling down: an id she does not own is refused whether it exists (alice's) or not, so the
    // answer tells her nothing. One at a time: started together, a refusal that came before its
    // turn to be awaited would be an unhandled rejection meanwhile.
    const refused = [
      () => getTask(mallory.client, victim),
      () => taskResult(mallory.client, randomUUID()),
      () => cancelTask(mallory.client, victim),
      () => listTasks(mallory.client, "not-a-cursor"),
    ];
    for (const lookup of refused) {
      const error = await expectRpcError(lookup(), RATE_LIMITED);
      expect(error.data).toMatchObject({ name: "failed_lookups", limit: 20 });
      expect((error.data as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(0);
    }
    expect((await fx!.app.engine.store.get(victim, { any: true }))?.status).toBe("working"); // the cancel never ran
    expect(await rejections("failed_lookups")).toBe(9);

    // Her own tasks are never refused by the guard: get, list, result and cancel answer as ever.
    expect((await getTask(mallory.client, own)).status).toBe("working");
    expect((await listTasks(mallory.client)).tasks.map((t) => t.taskId).sort()).toEqual([own, ownDone].sort());
    expect((await taskResult(mallory.client, ownDone)).content).toEqual([{ type: "text", text: "slept 0 ms" }]);
    expect((await cancelTask(mallory.client, own)).status).toBe("cancelled");

    // Another principal on the same address is not affected.
    expect((await getTask(alice.client, victim)).status).toBe("working");

    // T-SEC-5: each failed lookup is audited with who and from where; the limit hit once.
    const denied = logger.entries.filter((e) => e.obj["audit"] === "lookup_denied");
    expect(denied).toHaveLength(21);
    for (const entry of denied) expect(entry.obj).toMatchObject({ owner: "local|mallory", peer: "127.0.0.1", operation: "get" });
    const hits = logger.entries.filter((e) => e.obj["audit"] === "limit_hit");
    expect(hits.map((e) => e.obj)).toEqual([
      expect.objectContaining({
        limit: "failed_lookups",
        owner: "local|mallory",
        peer: "127.0.0.1",
        operation: "get",
        retryAfterMs: 60_000,
      }),
    ]);

    clock.advance(60_000);
    await expectRpcError(getTask(mallory.client, randomUUID()), -32602, /not found/i);
  });

  it("counts bad cursors and expired tasks as failed lookups, but not a successful lookup", async () => {
    const clock = manualClock();
    await start({ now: clock.now, rateLimit: "off", failedLookups: { perOwner: 3 } });
    const alice = await fx!.connect({ token: "tok-alice-31d7" });
    // A task that ends at once: one still running at its ttl reads as it is until the sweeper fails it.
    const { task } = await callToolAsTask(alice.client, "sleep", { ms: 0 }, { ttl: 1000 });
    for (let i = 0; i < 10 || (await getTask(alice.client, task.taskId)).status !== "completed"; i++)
      await getTask(alice.client, task.taskId);
    await expectRpcError(listTasks(alice.client, "not-a-cursor"), -32602, "Invalid cursor");
    await expectRpcError(getTask(alice.client, randomUUID()), -32602);
    clock.advance(1000);
    await expectRpcError(getTask(alice.client, task.taskId), -32602, /expired/);
    await expectRpcError(getTask(alice.client, task.taskId), RATE_LIMITED);
  });
});
