/**
 * Property-based fuzzing through the in-process path (T-ERR-1, T-ERR-4): the same generated
 * params as over HTTP, sent as JSON-RPC requests over the SDK's in-memory transport to a task
 * server without authentication, so every request reaches the SDK's request handling and our
 * handlers (task-augmented tools/call included, which HTTP answers on its plain-JSON path). Each
 * must be answered, with a JSON-RPC error other than -32603 or a result; the tasks made before
 * are unchanged afterwards. Fixed seed (FUZZ_SEED overrides).
 */
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { isJSONRPCRequest, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerDemoTools } from "../../src/demo/demo-tools.js";
import { createTaskServer, type TaskServer } from "../../src/mcp/task-server.js";
import { memoryStore } from "../../src/store/memory/memory-store.js";
import { listParams, lookupParams, toJsonText, toolCallParams } from "../support/fuzz-arbitraries.js";
import { RATE_LIMITS_OFF } from "../support/two-principals.js";

const SEED = Number(process.env["FUZZ_SEED"] ?? 20261130);
const RUNS = 500;

type Answer = { id: number; result?: Record<string, unknown>; error?: { code: number; message: string } };

let app: TaskServer;
let client: InMemoryTransport;
const waiting = new Map<number, (answer: Answer) => void>();
let nextId = 1;
let completed: string;
let working: string;
let before: Answer[];

/** Sends one request and resolves with its answer; rejects after 10 s (a hang is a finding). */
function call(method: string, params: unknown): Promise<Answer> {
  const id = nextId++;
  return new Promise<Answer>((resolve, reject) => {
    const timer = setTimeout(() => {
      waiting.delete(id);
      reject(new Error(`no answer to ${method} within 10 s`));
    }, 10_000);
    waiting.set(id, (answer) => {
      clearTimeout(timer);
      resolve(answer);
    });
    const message = { jsonrpc: "2.0", id, method, ...(params !== undefined && { params }) };
    client.send(message as JSONRPCMessage).catch((error: unknown) => {
      clearTimeout(timer);
      waiting.delete(id);
      reject(error instanceof Error ? error : new Error(String(error)));
    });
  });
}

const taskIdOf = (answer: Answer): string => (answer.result?.["task"] as { taskId?: string } | undefined)?.taskId ?? "";

beforeAll(async () => {
  app = registerDemoTools(createTaskServer({ name: "fuzz", version: "0", store: memoryStore(), pageSize: 2, ...RATE_LIMITS_OFF }));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  client = clientSide;
  client.onmessage = (message) => {
    const m = message as Partial<Answer> & { method?: string };
    if (m.method === undefined && typeof m.id === "number") waiting.get(m.id)?.(m as Answer);
  };
  await app.connect(serverSide);
  await client.start();
  await call("initialize", {
    protocolVersion: "2025-11-25",
    capabilities: { elicitation: {}, sampling: {} },
    clientInfo: { name: "fuzz", version: "0" },
  });
  await client.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  completed = taskIdOf(await call("tools/call", { name: "sleep", arguments: { ms: 1 }, task: {} }));
  await call("tasks/result", { taskId: completed });
  // A third task: tasks/list has a second page, so a real cursor to tamper with.
  await call("tasks/result", { taskId: taskIdOf(await call("tools/call", { name: "sleep", arguments: { ms: 1 }, task: {} })) });
  working = taskIdOf(await call("tools/call", { name: "sleep", arguments: { ms: 600_000 }, task: {} }));
  before = [
    await call("tasks/get", { taskId: completed }),
    await call("tasks/result", { taskId: completed }),
    await call("tasks/get", { taskId: working }),
  ];
});

afterAll(async () => {
  await client?.close();
  await app?.close();
});

/**
 * Params that make a message the SDK takes for a request (an object, `_meta` an object if
 * present). Anything else is an invalid envelope that the SDK's transports refuse before any
 * handler (HTTP answers 400, tested by the HTTP fuzzing) and the in-memory transport has no way
 * to answer, so it is not sent here.
 */
const asRequestParams = (method: string, params: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> =>
  params.filter((value) => isJSONRPCRequest({ jsonrpc: "2.0", id: 0, method, params: JSON.parse(toJsonText(value)) as unknown }));

/** Sends each generated params value (raw pieces spliced, as a server's parser would see them). */
async function fuzz(method: string, params: fc.Arbitrary<unknown>): Promise<void> {
  await fc.assert(
    fc.asyncProperty(asRequestParams(method, params), async (value) => {
      const sent = JSON.parse(toJsonText(value)) as unknown;
      const answer = await call(method, sent);
      const bad =
        answer.error !== undefined
          ? !Number.isSafeInteger(answer.error.code) || typeof answer.error.message !== "string" || answer.error.code === -32603
          : typeof answer.result !== "object" || answer.result === null;
      if (bad) throw new Error(`${method} answered ${JSON.stringify(answer).slice(0, 300)} to ${toJsonText(value).slice(0, 300)}`);
    }),
    { seed: SEED, numRuns: RUNS, endOnFailure: process.env["FUZZ_SHRINK"] === undefined },
  );
}

describe("fuzzing the in-process path: SDK request handling and our handlers (T-ERR-1, T-ERR-4)", () => {
  // Only the ended task's id is offered whole: a valid cancel of the running one would be legitimate.
  for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
    it(`answers ${RUNS} malformed ${method} requests with a JSON-RPC error other than -32603, or a result`, async () => {
      await fuzz(method, lookupParams([completed]));
    }, 60_000);
  }

  it(`answers ${RUNS} malformed tasks/list requests the same way`, async () => {
    const cursor = (await call("tasks/list", {})).result?.["nextCursor"];
    expect(typeof cursor).toBe("string");
    await fuzz("tasks/list", listParams([cursor as string]));
  }, 60_000);

  it(`answers ${RUNS} malformed task-augmented tools/call requests the same way`, async () => {
    await fuzz("tools/call", toolCallParams(["sleep", "echo", "ask", "sample", "fail", "throw", "batch", "nope"]));
  }, 60_000);

  it("left the tasks made before the fuzzing as they were (runs last)", async () => {
    const after = [
      await call("tasks/get", { taskId: completed }),
      await call("tasks/result", { taskId: completed }),
      await call("tasks/get", { taskId: working }),
    ];
    expect(after.map(({ result, error }) => ({ result, error }))).toEqual(before.map(({ result, error }) => ({ result, error })));
  });
});
