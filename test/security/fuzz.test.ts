/**
 * Property-based fuzzing over real Streamable HTTP (T-ERR-1, T-ERR-4, T-SEC-3): thousands of
 * generated malformed messages — params of every tasks/* method and of task-augmented tools/call,
 * and broken envelopes and bodies — POSTed raw by an authenticated principal (mallory), with JSON
 * and with SSE accepted. Each must be answered (src of the rules: test/support/fuzz-oracle.ts): a
 * JSON-RPC error that is not -32603, or a well-formed result; an HTTP 4xx with a JSON-RPC error
 * for envelope-level garbage; never a 5xx, never a hang, never another principal's task id.
 * Afterwards the server is healthy, a normal task round trip works, and the tasks made before the
 * fuzzing (alice's, and mallory's own) are exactly as they were.
 *
 * Reproducible: the seed is fixed (FUZZ_SEED overrides it); fast-check prints the seed and the
 * shrunk counterexample of a failure.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callToolAsTask, listAllTasks, listTasks, taskResult } from "../support/conformance.js";
import {
  anyRequestId,
  anyString,
  anyValue,
  deep,
  listParams,
  lookupParams,
  raw,
  toJsonText,
  toolCallParams,
} from "../support/fuzz-arbitraries.js";
import { judge } from "../support/fuzz-oracle.js";
import { ACCEPT_ANY, ACCEPT_JSON, postRpc } from "../support/rpc-exchange.js";
import { startTwoPrincipals, type TwoPrincipals } from "../support/two-principals.js";
import { allIds, createVictimTasks, snapshot, type VictimTasks } from "../support/victim-tasks.js";

const SEED = Number(process.env["FUZZ_SEED"] ?? 20261130);
/** About 3,400 messages in all: well under a minute on a loaded 2-core machine. */
const RUNS = { lookup: 450, list: 400, toolsCall: 800, envelope: 800 };
const TOOLS = ["sleep", "echo", "ask", "sample", "fail", "throw", "batch", "no-such-tool"];

let env: TwoPrincipals;
let victim: VictimTasks;
/** Mallory's own tasks from before the fuzzing: ended, so no valid request can change them. */
let ownIds: string[];
let cursors: string[];
let before: { alice: Record<string, unknown>; mallory: unknown[]; prototype: string[] };

beforeAll(async () => {
  env = await startTwoPrincipals({ app: { pageSize: 2 } });
  victim = await createVictimTasks(env.alice);
  ownIds = [];
  for (let i = 0; i < 3; i++) {
    const id = (await callToolAsTask(env.mallory.client, "sleep", { ms: 1 })).task.taskId;
    await taskResult(env.mallory.client, id);
    ownIds.push(id);
  }
  cursors = [(await listTasks(env.alice.client)).nextCursor, (await listTasks(env.mallory.client)).nextCursor].filter(
    (c): c is string => c !== undefined,
  );
  expect(cursors).toHaveLength(2);
  before = {
    alice: await snapshot(env.alice.client, victim),
    mallory: await listAllTasks(env.mallory.client),
    prototype: Object.getOwnPropertyNames(Object.prototype),
  };
}, 30_000);

afterAll(async () => {
  await env?.close();
});

const accept = fc.constantFrom(ACCEPT_ANY, ACCEPT_JSON);

/** Sends each generated body as mallory and fails with the oracle's reason for a bad answer. */
async function fuzz(body: fc.Arbitrary<string>, numRuns: number): Promise<void> {
  const secrets = allIds(victim);
  await fc.assert(
    fc.asyncProperty(body, accept, async (text, acceptHeader) => {
      const exchange = await postRpc(env.fx.url, text, env.mallory.headers(), { accept: acceptHeader, timeoutMs: 10_000 });
      const verdict = judge(text, exchange, secrets);
      if (verdict !== null) throw new Error(`${verdict}\n  sent (${acceptHeader}): ${text.slice(0, 300)}`);
    }),
    // No shrinking unless FUZZ_SHRINK is set: a failure is reported at once, with its seed and path.
    { seed: SEED, numRuns, endOnFailure: process.env["FUZZ_SHRINK"] === undefined },
  );
}

const request = (method: string, params: fc.Arbitrary<unknown>) =>
  fc.record({ id: anyRequestId, params }).map(({ id, params: p }) => toJsonText({ jsonrpc: "2.0", id, method, params: p }));

describe("fuzzing every tasks/* method and task-augmented tools/call over HTTP (T-ERR-1, T-ERR-4)", () => {
  for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
    it(`answers ${RUNS.lookup} malformed ${method} requests with a JSON-RPC error or a well-formed result, never -32603, a 5xx or a hang`, async () => {
      await fuzz(request(method, lookupParams([...allIds(victim), ...ownIds])), RUNS.lookup);
    }, 60_000);
  }

  it(`answers ${RUNS.list} malformed tasks/list requests (garbage, tampered, foreign cursors) the same way`, async () => {
    await fuzz(request("tasks/list", listParams(cursors)), RUNS.list);
  }, 60_000);

  it(`answers ${RUNS.toolsCall} malformed task-augmented tools/call requests the same way`, async () => {
    await fuzz(request("tools/call", toolCallParams(TOOLS)), RUNS.toolsCall);
  }, 60_000);

  it(`answers ${RUNS.envelope} malformed envelopes and bodies with a JSON-RPC error, an HTTP 4xx carrying one, or 202 for what asks no answer`, async () => {
    const method = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.constantFrom("tasks/get", "tasks/result", "tasks/cancel", "tasks/list", "tools/call", "tools/list", "ping"),
      },
      { weight: 1, arbitrary: fc.constantFrom("initialize", "tasks/unknown", "notifications/cancelled", "rpc.discover", "__proto__") },
      { weight: 1, arbitrary: anyValue },
    );
    const message = fc.record(
      {
        jsonrpc: fc.oneof(
          { weight: 4, arbitrary: fc.constant("2.0") },
          { weight: 1, arbitrary: fc.constantFrom<unknown>("1.0", 2, null, "2.0 ") },
        ),
        id: anyRequestId,
        method,
        params: anyValue,
        result: anyValue,
        error: anyValue,
      },
      { requiredKeys: [] },
    );
    const body = fc.oneof(
      { weight: 60, arbitrary: message.map(toJsonText) },
      { weight: 20, arbitrary: fc.array(message, { maxLength: 3 }).map(toJsonText) },
      { weight: 10, arbitrary: fc.oneof(anyString, fc.constantFrom("", "{", '{"jsonrpc":"2.0",', "[1,", "\u0000", "nul", "{}{}")) },
      { weight: 10, arbitrary: anyValue.map(toJsonText) },
      { weight: 10, arbitrary: fc.constantFrom(deep(300_000), raw("1e400")).map(toJsonText) },
      { weight: 10, arbitrary: message.map((m) => toJsonText(m).replace(/^\{/, '{"id":1,"id":"dup",')) },
      // Over the 4 MiB body limit (HTTP 413): rare, each is 4 MB on the wire.
      {
        weight: 1,
        arbitrary: fc
          .constant(null)
          .map(() => toJsonText({ jsonrpc: "2.0", id: 9, method: "tasks/list", params: { pad: "x".repeat(4_300_000) } })),
      },
    );
    await fuzz(body, RUNS.envelope);
    // 15 s on a quiet 2-core machine; 4 MB bodies and 300,000-deep arrays make it the slowest under load.
  }, 180_000);
});

describe("after the fuzzing (runs last)", () => {
  it("is healthy: /healthz answers 200 and a task-augmented call runs to its result", async () => {
    expect((await fetch(new URL("/healthz", env.fx.url))).status).toBe(200);
    const created = await callToolAsTask(env.mallory.client, "sleep", { ms: 5 });
    expect((await taskResult(env.mallory.client, created.task.taskId)).content).toEqual([{ type: "text", text: "slept 5 ms" }]);
  });

  it("left the tasks made before it exactly as they were: alice's (status, times, results, list) and mallory's own", async () => {
    expect(await snapshot(env.alice.client, victim)).toEqual(before.alice);
    expect((await listAllTasks(env.alice.client)).map((t) => t.taskId).sort()).toEqual(allIds(victim).sort());
    const mallorysNow = await listAllTasks(env.mallory.client);
    for (const task of before.mallory) expect(mallorysNow).toContainEqual(task);
  });

  it("polluted no prototype", () => {
    expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(before.prototype);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
  });
});
