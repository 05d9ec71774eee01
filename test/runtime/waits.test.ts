/**
 * Waiting costs nothing (docs/durable-execution.md, Waiting): a handler that waits — for an answer,
 * a time, an event — holds no slot; a replayable one is parked (let go, replayed when woken).
 * In-process engines on the memory store and on a real SQLite file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { localEventBus } from "../../src/events/local-event-bus.js";
import type { RecoveryPolicy } from "../../src/runtime/recovery-policy.js";
import type { TaskContext } from "../../src/runtime/task-context.js";
import { TaskEngine } from "../../src/runtime/task-engine.js";
import { memoryStore } from "../../src/store/memory/memory-store.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { TaskStore } from "../../src/store/task-store.js";
import type { TaskRecord } from "../../src/core/task.js";
import { isWaitStore } from "../../src/store/wait-store.js";

const alice = { owner: "alice" };
const bob = { owner: "bob" };
const origin = { sessionId: null, progressToken: null, accepts: ["elicitation/create"] };

type Handler = (ctx: TaskContext, task: TaskRecord) => Promise<unknown>;

let dir: string;
const engines: TaskEngine[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-waits-"));
});
afterEach(async () => {
  for (const e of engines.splice(0)) {
    await e.close();
    await e.store.close();
  }
  rmSync(dir, { recursive: true, force: true });
});

const stores: Array<[string, () => TaskStore]> = [
  ["memory", () => memoryStore()],
  ["SQLite", () => sqliteStore(join(dir, "t.db"))],
];

async function engineOn(store: TaskStore, handlers: Record<string, Handler>, options: { maxRunning?: number } = {}): Promise<TaskEngine> {
  const engine = new TaskEngine({
    store,
    bus: localEventBus(),
    ...options,
    runner: async (task, ctx) => ({ value: await (handlers[task.name ?? ""] as Handler)(ctx, task) }),
  });
  engines.push(engine);
  await engine.start();
  return engine;
}

function create(engine: TaskEngine, name: string, recovery: RecoveryPolicy = "resume", who = alice): Promise<TaskRecord> {
  return engine.create({ ...who, method: "tools/call", name, request: {}, origin, ttl: 600_000, recovery });
}

async function until<T>(read: () => Promise<T | undefined | null | false>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The task as stored (polling through the store, not the rate-limited lookups). */
async function read(engine: TaskEngine, id: string, _who = alice): Promise<TaskRecord> {
  return (await engine.store.get(id, { any: true })) as TaskRecord;
}

async function finished(engine: TaskEngine, id: string, who = alice): Promise<TaskRecord> {
  return until(async () => {
    const task = await read(engine, id, who);
    return task.outcome !== null ? task : null;
  });
}

const ask = (ctx: TaskContext): Promise<unknown> =>
  ctx.request("elicitation/create", { mode: "form", message: "?", requestedSchema: { type: "object", properties: {} } });

describe.each(stores)("waits on the %s store", (_name, makeStore) => {
  it.each<[RecoveryPolicy, string]>([
    ["resume", "parked"],
    ["fail", "memory"],
  ])("two unanswered questions (recovery %s) leave both of two slots free for other work", async (recovery, mode) => {
    const engine = await engineOn(makeStore(), { ask, quick: async () => "done" }, { maxRunning: 2 });
    const a = await create(engine, "ask", recovery);
    const b = await create(engine, "ask", recovery);
    await until(
      async () =>
        (await read(engine, b.id, alice)).status === "input_required" && (await read(engine, a.id, alice)).status === "input_required",
    );
    await until(async () => (await read(engine, a.id, alice)).waitMode === mode && (await read(engine, b.id, alice)).waitMode === mode);
    const quick = await create(engine, "quick");
    const done = await finished(engine, quick.id);
    expect(done.status).toBe("completed");
  });

  it("a question answered while its task is parked is replayed by a new run, which gets the answer", async () => {
    let runs = 0;
    const engine = await engineOn(makeStore(), {
      ask: async (ctx) => {
        runs++;
        return ask(ctx);
      },
    });
    const task = await create(engine, "ask");
    await until(async () => (await read(engine, task.id, alice)).waitMode === "parked");
    const [input] = await engine.pendingInputs(task.id, alice);
    expect(await engine.respond(task.id, alice, input!.id, { kind: "result", value: { action: "accept", content: {} } })).toBe(true);
    const done = await finished(engine, task.id);
    expect(done.outcome).toEqual({ kind: "result", value: { action: "accept", content: {} } });
    expect(runs).toBe(2);
  });

  it("a resumable sleeper is parked with a status message saying until when, and resumes by replay when its time comes", async () => {
    const runs: number[] = [];
    const engine = await engineOn(makeStore(), {
      nap: async (ctx, task) => {
        runs.push(Date.now());
        await ctx.sleep(task.createdAt + 600);
        return "woke";
      },
    });
    const task = await create(engine, "nap");
    const parked = await until(async () => {
      const t = await engine.get(task.id, alice);
      return t.waitMode === "parked" ? t : null;
    });
    expect(parked.status).toBe("working");
    expect(parked.statusMessage).toMatch(/^Sleeping until \d{4}-\d\d-\d\dT/);
    const done = await finished(engine, task.id);
    expect(done.outcome).toEqual({ kind: "result", value: "woke" });
    expect(Date.now() - task.createdAt).toBeGreaterThanOrEqual(600);
    expect(runs).toHaveLength(2);
  });

  it("a sleeper whose tool cannot be replayed waits in memory, holding no slot, and is not run again", async () => {
    let runs = 0;
    const engine = await engineOn(
      makeStore(),
      {
        nap: async (ctx) => {
          runs++;
          await ctx.sleep(Date.now() + 400);
          return "woke";
        },
        quick: async () => "done",
      },
      { maxRunning: 1 },
    );
    const task = await create(engine, "nap", "fail");
    await until(async () => (await read(engine, task.id, alice)).waitMode === "memory");
    const quick = await create(engine, "quick");
    expect((await finished(engine, quick.id)).status).toBe("completed");
    expect((await finished(engine, task.id)).outcome).toEqual({ kind: "result", value: "woke" });
    expect(runs).toBe(1);
  });

  it("an event of the task's owner wakes its wait with the payload", async () => {
    const engine = await engineOn(makeStore(), { wait: async (ctx) => ctx.waitForEvent(`approval/${ctx.taskId}`, null) });
    const task = await create(engine, "wait");
    await until(async () => (await read(engine, task.id, alice)).waitMode === "parked");
    expect(await engine.emit(alice, `approval/${task.id}`, { approved: true })).toMatchObject({ woken: 1 });
    expect((await finished(engine, task.id)).outcome).toEqual({ kind: "result", value: { timedOut: false, payload: { approved: true } } });
  });

  it("an event emitted just before the wait starts is seen (no lost wake-up)", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const engine = await engineOn(makeStore(), {
      wait: async (ctx) => {
        await gate;
        return ctx.waitForEvent("deploy/done", null);
      },
    });
    const task = await create(engine, "wait");
    expect(await engine.emit(alice, "deploy/done", { version: 7 })).toMatchObject({ woken: 0 });
    release();
    expect((await finished(engine, task.id)).outcome).toEqual({ kind: "result", value: { timedOut: false, payload: { version: 7 } } });
  });

  it("an event of another owner does not wake the task", async () => {
    const engine = await engineOn(makeStore(), { wait: async (ctx) => ctx.waitForEvent("approval/x", Date.now() + 800) });
    const task = await create(engine, "wait");
    await until(async () => (await read(engine, task.id, alice)).waitMode === "parked");
    expect(await engine.emit(bob, "approval/x", { approved: true })).toMatchObject({ woken: 0 });
    expect((await finished(engine, task.id)).outcome).toEqual({ kind: "result", value: { timedOut: true } });
  });

  it("a wait for an event resolves with timedOut when its timeout passes first", async () => {
    const engine = await engineOn(makeStore(), { wait: async (ctx) => ctx.waitForEvent("never", Date.now() + 300) });
    const task = await create(engine, "wait");
    expect((await finished(engine, task.id)).outcome).toEqual({ kind: "result", value: { timedOut: true } });
  });

  it("two waits for one event name in a run each take their own event", async () => {
    const engine = await engineOn(makeStore(), {
      twice: async (ctx) => [await ctx.waitForEvent("tick", null), await ctx.waitForEvent("tick", null)],
    });
    const task = await create(engine, "twice");
    await until(async () => (await read(engine, task.id, alice)).waitMode === "parked");
    await engine.emit(alice, "tick", 1);
    // The replay consumed the first event and parked again on the second wait.
    await until(async () => (await read(engine, task.id, alice)).waitMode === "parked" && (await engine.store.history(task.id)).length > 0);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await until(async () => (await read(engine, task.id, alice)).waitMode === "parked");
    await engine.emit(alice, "tick", 2);
    expect((await finished(engine, task.id)).outcome).toEqual({
      kind: "result",
      value: [
        { timedOut: false, payload: 1 },
        { timedOut: false, payload: 2 },
      ],
    });
  });

  it("an emit with a malformed name or a payload over the limit is refused with -32602", async () => {
    const engine = await engineOn(makeStore(), {});
    await expect(engine.emit(alice, "../bad name", {})).rejects.toMatchObject({ code: -32602 });
    await expect(engine.emit(alice, "", {})).rejects.toMatchObject({ code: -32602 });
    await expect(engine.emit(alice, "big", { blob: "x".repeat(70 * 1024) })).rejects.toMatchObject({ code: -32602 });
  });
});

describe("waits across a restart (SQLite file)", () => {
  const file = (): string => join(dir, "restart.db");

  it("a nap survives a restart: the parked task is untouched by the stop and completes under the next process", async () => {
    const nap: Handler = async (ctx, task) => {
      await ctx.sleep(task.createdAt + 800);
      return "woke";
    };
    const first = await engineOn(sqliteStore(file()), { nap });
    const task = await create(first, "nap");
    await until(async () => (await read(first, task.id, alice)).waitMode === "parked");
    const report = await first.drain(5000);
    expect(report.handedBack).toEqual([]);
    await first.close();
    await first.store.close();
    engines.splice(engines.indexOf(first), 1);
    const second = await engineOn(sqliteStore(file()), { nap });
    expect((await finished(second, task.id)).outcome).toEqual({ kind: "result", value: "woke" });
  });

  it("a question asked by a process that stopped is answered to the next one, which replays the task to its end", async () => {
    const first = await engineOn(sqliteStore(file()), { ask });
    const task = await create(first, "ask");
    await until(async () => (await read(first, task.id, alice)).waitMode === "parked");
    await first.close();
    await first.store.close();
    engines.splice(engines.indexOf(first), 1);
    const second = await engineOn(sqliteStore(file()), { ask });
    const [input] = await second.pendingInputs(task.id, alice);
    await second.respond(task.id, alice, input!.id, { kind: "result", value: { action: "decline" } });
    expect((await finished(second, task.id)).outcome).toEqual({ kind: "result", value: { action: "decline" } });
  });
});

it("the stores used here keep waits", () => {
  expect(isWaitStore(memoryStore())).toBe(true);
});
