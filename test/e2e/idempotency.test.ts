/**
 * Idempotent tools/call (SEP-3182, docs/idempotency.md) over real HTTP on a SQLite file,
 * in both eras from one table of cases: a key names one operation of one caller; its retries get
 * the same task (or the recorded answer) and never run the tool again.
 */
import { OWN_ERROR_CODES, type EraId } from "../../src/mcp/own-error-codes.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { ALICE, MALLORY, startTwoPrincipals, type TwoPrincipals } from "../support/two-principals.js";
import { statelessRpc } from "../support/stateless-client.js";
import { rawPost, type HttpClient } from "../support/http-fixture.js";
import { TaskClient } from "../../src/client/task-client.js";
import { TASK_ID_PATTERN, WHOLE_TASK_ID } from "../support/task-id-pattern.js";

const ANY = z.looseObject({});

/** Runs of the counting tool, by its `tag` argument: how many times the work really ran. */
const runs = new Map<string, number>();
const ran = (tag: string): number => runs.get(tag) ?? 0;

interface Answer {
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

/** One era's way of sending a tools/call, as the given principal. */
interface Era {
  name: string;
  /** A call as a task (2025-11-25: params.task; 2026-07-28: the extension declared, an optional tool). */
  callAsTask(who: Who, params: Record<string, unknown>): Promise<Answer>;
  /** A plain call from a client that declares tasks (so no fallback). */
  callPlainly(who: Who, params: Record<string, unknown>): Promise<Answer>;
  /** A plain call from a client that declares no tasks (the fallback for hosts without tasks). */
  callWithoutTasks(who: Who, params: Record<string, unknown>): Promise<Answer>;
  /** The taskId a task answer names. */
  taskIdOf(answer: Answer): string;
  capabilities(who: Who): Promise<Record<string, unknown> | undefined>;
}

type Who = "alice" | "mallory";

let fx: TwoPrincipals;
let dir: string;
let plainAlice: HttpClient;
let plainMallory: HttpClient;

async function sdkCall(client: HttpClient, params: Record<string, unknown>): Promise<Answer> {
  try {
    return { result: await client.client.request({ method: "tools/call", params }, ANY, { timeout: 30_000 }) };
  } catch (error) {
    if (error instanceof McpError) return { error: { code: error.code, message: error.message, data: error.data } };
    throw error;
  }
}

async function rawCall(who: Who, params: Record<string, unknown>, declare: boolean): Promise<Answer> {
  const { body } = await statelessRpc(fx.fx.url, "tools/call", params, { declare, token: who === "alice" ? ALICE.token : MALLORY.token });
  return { ...(body.result && { result: body.result }), ...(body.error && { error: body.error }) };
}

const ERAS: Era[] = [
  {
    name: "2025-11-25",
    callAsTask: (who, params) => sdkCall(who === "alice" ? fx.alice : fx.mallory, { ...params, task: { ttl: 60_000 } }),
    callPlainly: (who, params) => sdkCall(who === "alice" ? fx.alice : fx.mallory, params),
    callWithoutTasks: (who, params) => sdkCall(who === "alice" ? plainAlice : plainMallory, params),
    taskIdOf: (answer) => String((answer.result?.["task"] as { taskId?: unknown } | undefined)?.taskId),
    // Read off the wire: the SDK client's schema drops members of `tools` it does not know.
    capabilities: async (who) => {
      const init = await rawPost(
        fx.fx.url,
        {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
        },
        { authorization: `Bearer ${who === "alice" ? ALICE.token : MALLORY.token}` },
      );
      const data = init.text.split("\n").find((line) => line.startsWith("data: {"));
      const message = JSON.parse(data?.slice("data: ".length) ?? "{}") as { result?: { capabilities?: Record<string, unknown> } };
      return message.result?.capabilities;
    },
  },
  {
    name: "2026-07-28",
    callAsTask: (who, params) => rawCall(who, params, true),
    callPlainly: (who, params) => rawCall(who, params, true),
    callWithoutTasks: (who, params) => rawCall(who, params, false),
    taskIdOf: (answer) => String(answer.result?.["taskId"] ?? (answer.result?.["task"] as { taskId?: unknown } | undefined)?.taskId),
    capabilities: async (who) =>
      (await statelessRpc(fx.fx.url, "server/discover", {}, { token: who === "alice" ? ALICE.token : MALLORY.token })).body.result?.[
        "capabilities"
      ] as Record<string, unknown> | undefined,
  },
];

/** The task id a fallback's background answer names (its structuredContent, else its text). */
function backgroundTaskId(answer: Answer): string | undefined {
  const text = JSON.stringify(answer.result ?? {});
  return new RegExp(`task (${TASK_ID_PATTERN})`).exec(text)?.[1];
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-idempotency-"));
  // inlineWaitMs 0: under 2026-07-28 a call as a task is answered with its task at once.
  fx = await startTwoPrincipals({ app: { store: sqliteStore(join(dir, "tasks.db")), inlineWaitMs: 0, backgroundAfterMs: 100 } });
  fx.fx.app.tool(
    "count",
    {
      description: "Counts its runs per tag, then waits ms.",
      input: z.object({ tag: z.string(), ms: z.number().optional(), extra: z.unknown().optional() }),
      taskSupport: "optional",
    },
    async ({ tag, ms }) => {
      runs.set(tag, ran(tag) + 1);
      await new Promise((resolve) => setTimeout(resolve, ms ?? 0));
      return { content: [{ type: "text", text: `counted ${tag}` }] };
    },
  );
  // Plain calls only (taskSupport "forbidden"): in both eras a keyed call of it is answered plainly.
  fx.fx.app.tool(
    "count-plain",
    {
      description: "Counts its runs per tag, then waits ms; never a task.",
      input: z.object({ tag: z.string(), ms: z.number().optional() }),
    },
    async ({ tag, ms }) => {
      runs.set(tag, ran(tag) + 1);
      await new Promise((resolve) => setTimeout(resolve, ms ?? 0));
      return { content: [{ type: "text", text: `counted ${tag}` }] };
    },
  );
  fx.fx.app.tool(
    "refuse",
    { description: "Ends with a JSON-RPC error, counting its runs; never a task.", input: z.object({ tag: z.string() }) },
    async ({ tag }) => {
      runs.set(tag, ran(tag) + 1);
      throw new McpError(-32042, "refused on purpose", { tag });
    },
  );
  plainAlice = await fx.fx.connect({ token: ALICE.token, capabilities: {} });
  plainMallory = await fx.fx.connect({ token: MALLORY.token, capabilities: {} });
});

afterAll(async () => {
  await fx?.close();
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;
/** A fresh tag and key per test, so the cases share a server without sharing state. */
const fresh = (): { tag: string; key: string } => ({
  tag: `t${++n}-${Math.random().toString(36).slice(2)}`,
  key: `key-${n}-${Math.random().toString(36).slice(2)}`,
});

beforeEach(() => runs.clear());

describe.each(ERAS)("idempotent tools/call ($name)", (era) => {
  it("declares tools.idempotency (SEP-3182)", async () => {
    expect((await era.capabilities("alice"))?.["tools"]).toMatchObject({ idempotency: {} });
  });

  it("20 concurrent identical keyed creations: one task, one execution, the same taskId for all", async () => {
    const { tag, key } = fresh();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => era.callAsTask("alice", { name: "count", arguments: { tag, ms: 50 }, idempotencyKey: key })),
    );
    for (const answer of answers) expect(answer.error).toBeUndefined();
    expect(new Set(answers.map((a) => era.taskIdOf(a))).size).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(ran(tag)).toBe(1);
  });

  it("a retry after the task ended gets the same task in its current state, and runs nothing", async () => {
    const { tag, key } = fresh();
    const first = await era.callAsTask("alice", { name: "count", arguments: { tag }, idempotencyKey: key });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const again = await era.callAsTask("alice", { name: "count", arguments: { tag }, idempotencyKey: key });
    expect(era.taskIdOf(again)).toBe(era.taskIdOf(first));
    expect(JSON.stringify(again.result)).toContain("completed");
    expect(ran(tag)).toBe(1);
  });

  it("equivalent arguments in another key order are the same call", async () => {
    const { tag, key } = fresh();
    const first = await era.callAsTask("alice", { name: "count", arguments: { tag, extra: { a: 1, b: [1, 2] } }, idempotencyKey: key });
    const again = await era.callAsTask("alice", { name: "count", arguments: { extra: { b: [1, 2], a: 1 }, tag }, idempotencyKey: key });
    expect(again.error).toBeUndefined();
    expect(era.taskIdOf(again)).toBe(era.taskIdOf(first));
  });

  it("the same key with other arguments is a conflict: -32602, data.type idempotency_key_conflict, nothing run", async () => {
    const { tag, key } = fresh();
    await era.callAsTask("alice", { name: "count", arguments: { tag }, idempotencyKey: key });
    const other = await era.callAsTask("alice", { name: "count", arguments: { tag: `${tag}-other` }, idempotencyKey: key });
    expect(other.error?.code).toBe(-32602);
    expect(other.error?.data).toEqual({ type: "idempotency_key_conflict", idempotencyKey: key });
    const otherTool = await era.callAsTask("alice", { name: "sleep", arguments: { ms: 1 }, idempotencyKey: key });
    expect(otherTool.error?.data).toMatchObject({ type: "idempotency_key_conflict" });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(ran(`${tag}-other`)).toBe(0);
  });

  it("another principal's same key is another operation: a different task, run once more", async () => {
    const { tag, key } = fresh();
    const mine = await era.callAsTask("alice", { name: "count", arguments: { tag }, idempotencyKey: key });
    const theirs = await era.callAsTask("mallory", { name: "count", arguments: { tag }, idempotencyKey: key });
    expect(theirs.error).toBeUndefined();
    expect(era.taskIdOf(theirs)).not.toBe(era.taskIdOf(mine));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(ran(tag)).toBe(2);
  });

  it("a keyed plain call still running: the retry is refused with idempotency_key_in_progress; once done, its result is replayed", async () => {
    const { tag, key } = fresh();
    const first = era.callPlainly("alice", { name: "count-plain", arguments: { tag, ms: 400 }, idempotencyKey: key });
    await new Promise((resolve) => setTimeout(resolve, 150));
    const during = await era.callPlainly("alice", { name: "count-plain", arguments: { tag, ms: 400 }, idempotencyKey: key });
    expect(during.error?.code).toBe(OWN_ERROR_CODES.unavailable.codes[era.name as EraId]);
    expect(during.error?.data).toMatchObject({ type: "idempotency_key_in_progress", idempotencyKey: key });
    const answered = await first;
    expect(JSON.stringify(answered.result)).toContain(`counted ${tag}`);
    const after = await era.callPlainly("alice", { name: "count-plain", arguments: { tag, ms: 400 }, idempotencyKey: key });
    expect(after.result).toEqual(answered.result);
    expect(ran(tag)).toBe(1);
  });

  it("a keyed plain call that ended in a JSON-RPC error: the retry replays the same error, nothing run again", async () => {
    const { tag, key } = fresh();
    const first = await era.callPlainly("alice", { name: "refuse", arguments: { tag }, idempotencyKey: key });
    expect(first.error).toMatchObject({ code: -32042, data: { tag } });
    const again = await era.callPlainly("alice", { name: "refuse", arguments: { tag }, idempotencyKey: key });
    expect(again.error).toEqual(first.error);
    expect(ran(tag)).toBe(1);
  });

  it("a plain sleep retried while it runs, by a client declaring no tasks and sending no key: the same task (idempotentHint)", async () => {
    const ms = 1500 + n;
    const first = await era.callWithoutTasks("alice", { name: "sleep", arguments: { ms } });
    const again = await era.callWithoutTasks("alice", { name: "sleep", arguments: { ms } });
    const id = backgroundTaskId(first);
    expect(id).toBeDefined();
    expect(backgroundTaskId(again)).toBe(id);
  });

  it("a keyless plain call of a tool without idempotentHint runs again", async () => {
    const { tag } = fresh();
    await Promise.all([
      era.callWithoutTasks("alice", { name: "count", arguments: { tag, ms: 300 } }),
      era.callWithoutTasks("alice", { name: "count", arguments: { tag, ms: 300 } }),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(ran(tag)).toBe(2);
  });

  it.each([
    ["a number", 17],
    ["an empty string", ""],
    ["256 characters", "k".repeat(256)],
  ])("an idempotencyKey that is %s: -32602, nothing run", async (_what, idempotencyKey) => {
    const { tag } = fresh();
    const answer = await era.callAsTask("alice", { name: "count", arguments: { tag }, idempotencyKey });
    expect(answer.error?.code).toBe(-32602);
    expect(answer.error?.message).toMatch(/idempotencyKey/);
    expect(ran(tag)).toBe(0);
  });

  it("a key of 255 characters is taken", async () => {
    const { tag } = fresh();
    const answer = await era.callAsTask("alice", { name: "count", arguments: { tag }, idempotencyKey: `${n}`.padEnd(255, "k") });
    expect(answer.error).toBeUndefined();
  });
});

describe.each([
  [
    "2025-11-25",
    async (method: string, params: Record<string, unknown>): Promise<Answer> => {
      try {
        return { result: await fx.alice.client.request({ method, params } as never, ANY) };
      } catch (error) {
        if (error instanceof McpError) return { error: { code: error.code, message: error.message } };
        throw error;
      }
    },
  ],
  [
    "2026-07-28",
    async (method: string, params: Record<string, unknown>): Promise<Answer> => {
      const { body } = await statelessRpc(fx.fx.url, method, params, { token: ALICE.token });
      return { ...(body.result && { result: body.result }), ...(body.error && { error: body.error }) };
    },
  ],
])("an idempotencyKey on another method (%s)", (_era, send) => {
  it.each(["tools/list", "tasks/get"])("%s with an idempotencyKey: -32602 naming it", async (method) => {
    const answer = await send(method, {
      idempotencyKey: "k1",
      ...(method === "tasks/get" && { taskId: "00000000-0000-4000-8000-000000000000" }),
    });
    expect(answer.error?.code).toBe(-32602);
    expect(answer.error?.message).toMatch(/idempotencyKey is defined only for tools\/call/);
  });
});

describe.each(["2025-11-25", "2026-07-28"] as const)("TaskClient idempotencyKey (%s)", (protocol) => {
  it("two TaskClients sending one call with one key get one task, run once", async () => {
    const { tag, key } = fresh();
    const first = await TaskClient.connect(fx.fx.url, { protocol, token: ALICE.token });
    const second = await TaskClient.connect(fx.fx.url, { protocol, token: ALICE.token });
    try {
      const a = await first.callTool("count", { tag, ms: 300 }, { task: true, idempotencyKey: key });
      const b = await second.callTool("count", { tag, ms: 300 }, { task: true, idempotencyKey: key });
      if (a.kind !== "task" || b.kind !== "task") throw new Error("both calls should have answered with a task");
      expect(a.task.id).toMatch(WHOLE_TASK_ID);
      expect(b.task.id).toBe(a.task.id);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(ran(tag)).toBe(1);
    } finally {
      await first.close();
      await second.close();
    }
  });
});
