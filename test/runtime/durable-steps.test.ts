/**
 * Durable execution in the engine (docs/durable-execution.md): a run interrupted by a shutdown
 * is resumed by the next engine on the same SQLite file, with its checkpoints and the requestor's
 * stored answers replayed. Each test stops one engine mid-run and starts another on the file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { localEventBus } from "../../src/events/local-event-bus.js";
import type { RecoveryPolicy } from "../../src/runtime/recovery-policy.js";
import type { TaskContext } from "../../src/runtime/task-context.js";
import { TaskEngine } from "../../src/runtime/task-engine.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { TaskRecord } from "../../src/core/task.js";

const alice = { owner: "alice" };
const origin = { sessionId: null, progressToken: null, accepts: ["elicitation/create", "sampling/createMessage"] };

let dir: string;
const engines: TaskEngine[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-durable-"));
});
afterEach(async () => {
  for (const e of engines.splice(0)) await e.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Rejects when the run is aborted (the engine closing): where a first run is "killed". */
function hang(ctx: TaskContext): Promise<never> {
  return new Promise((_, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true }));
}

type Handler = (ctx: TaskContext, run: number) => Promise<unknown>;

/** An engine on the test's SQLite file whose runner calls `handler` with the run's number (1, 2, …). */
async function engineWith(handler: Handler, runs: { n: number }, options: { maxResultBytes?: number } = {}): Promise<TaskEngine> {
  const engine = new TaskEngine({
    store: sqliteStore(join(dir, "t.db")),
    bus: localEventBus(),
    ...options,
    runner: async (_task, ctx) => ({ value: await handler(ctx, ++runs.n) }),
  });
  engines.push(engine);
  await engine.start();
  return engine;
}

async function create(engine: TaskEngine, recovery: RecoveryPolicy): Promise<TaskRecord> {
  return engine.create({ ...alice, method: "tools/call", name: "durable", request: {}, origin, ttl: 60_000, recovery });
}

async function until<T>(read: () => Promise<T | undefined | null | false>): Promise<T> {
  for (;;) {
    const value = await read();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function outcomeOf(engine: TaskEngine, taskId: string): Promise<TaskRecord> {
  return until(async () => {
    const task = await engine.get(taskId, alice);
    return task.outcome !== null ? task : null;
  });
}

/** Closes `engine` (a resumable task is left for the next start) and starts the next one. */
async function restart(engine: TaskEngine, handler: Handler, runs: { n: number }): Promise<TaskEngine> {
  await engine.close();
  // As when the process ends: the store closes too, and with it the file's writer lock.
  await engine.store.close();
  engines.splice(engines.indexOf(engine), 1);
  return engineWith(handler, runs);
}

describe("durable execution: ctx.step", () => {
  it("a step checkpointed by an interrupted run is restored on the re-run without running its function again", async () => {
    const calls = { a: 0, b: 0 };
    const reached = { b: false };
    const runs = { n: 0 };
    const handler: Handler = async (ctx, run) => {
      const a = await ctx.step("a", async () => ({ run, calls: ++calls.a }));
      const b = await ctx.step("b", async () => {
        reached.b = true;
        if (run === 1) return hang(ctx);
        return ++calls.b;
      });
      return { a, b };
    };
    const first = await engineWith(handler, runs);
    const task = await create(first, "resume");
    await until(async () => reached.b);
    const second = await restart(first, handler, runs);
    const done = await outcomeOf(second, task.id);
    expect(done.status).toBe("completed");
    expect(done.outcome).toEqual({ kind: "result", value: { a: { run: 1, calls: 1 }, b: 1 } });
    expect(calls).toEqual({ a: 1, b: 1 });
  });

  it("the n-th call of one step name is its own step: a loop replays call by call", async () => {
    const runs = { n: 0 };
    const ran: Array<[number, number]> = [];
    const handler: Handler = async (ctx, run) => {
      const got: number[] = [];
      for (let i = 1; i <= 3; i++) {
        got.push(
          await ctx.step("item", async () => {
            if (run === 1 && i === 3) return hang(ctx);
            ran.push([run, i]);
            return i * 10;
          }),
        );
      }
      return got;
    };
    const first = await engineWith(handler, runs);
    const task = await create(first, "resume");
    await until(async () => ran.length === 2);
    const second = await restart(first, handler, runs);
    expect((await outcomeOf(second, task.id)).outcome).toEqual({ kind: "result", value: [10, 20, 30] });
    expect(ran).toEqual([
      [1, 1],
      [1, 2],
      [2, 3],
    ]);
  });

  it("recovery retry re-runs from scratch: every step runs again", async () => {
    const runs = { n: 0 };
    const ran: number[] = [];
    const handler: Handler = async (ctx, run) => {
      await ctx.step("a", async () => ran.push(run));
      if (run === 1) await hang(ctx);
      return "done";
    };
    const first = await engineWith(handler, runs);
    const task = await create(first, "retry");
    await until(async () => ran.length === 1);
    const second = await restart(first, handler, runs);
    expect((await outcomeOf(second, task.id)).status).toBe("completed");
    expect(ran).toEqual([1, 2]);
  });

  it("a step result comes back through JSON, undefined included, on the first run as on a re-run", async () => {
    const runs = { n: 0 };
    const engine = await engineWith(
      async (ctx) => ({
        date: await ctx.step("date", async () => new Date(0)),
        nothing: (await ctx.step("nothing", async () => undefined)) === undefined,
      }),
      runs,
    );
    const task = await create(engine, "resume");
    expect((await outcomeOf(engine, task.id)).outcome).toEqual({
      kind: "result",
      value: { date: "1970-01-01T00:00:00.000Z", nothing: true },
    });
  });

  it("a step result larger than maxResultBytes fails the task instead of being stored", async () => {
    const runs = { n: 0 };
    const engine = await engineWith(async (ctx) => ctx.step("big", async () => "x".repeat(2_000)), runs, { maxResultBytes: 1_000 });
    const task = await create(engine, "resume");
    const done = await outcomeOf(engine, task.id);
    expect(done.status).toBe("failed");
    expect(done.outcome).toMatchObject({
      kind: "error",
      error: { code: -32603, data: { limit: 1_000, name: "result_bytes", step: "big" } },
    });
  });

  it("a task of a tool without a recovery policy is failed by the restart, as before", async () => {
    const runs = { n: 0 };
    const handler: Handler = async (ctx) => {
      await ctx.step("a", async () => 1);
      return hang(ctx);
    };
    const first = await engineWith(handler, runs);
    const task = await create(first, "fail");
    await until(async () => runs.n === 1);
    const second = await restart(first, handler, runs);
    expect((await outcomeOf(second, task.id)).status).toBe("failed");
    expect(runs.n).toBe(1);
  });
});

describe("durable execution: questions", () => {
  const ASK = { message: "colour?" };
  const answer = (colour: string) => ({ kind: "result" as const, value: { action: "accept", content: { colour } } });

  it("an answered question is replayed on the re-run without asking again", async () => {
    const runs = { n: 0 };
    let before = true;
    const handler: Handler = async (ctx) => {
      const got = await ctx.request("elicitation/create", ASK);
      // Everything the first engine runs is interrupted by its stop; the second engine's run ends.
      if (before) await hang(ctx);
      return got;
    };
    const first = await engineWith(handler, runs);
    const task = await create(first, "resume");
    const input = await until(async () => (await first.pendingInputs(task.id, alice))[0]);
    await first.respond(task.id, alice, input.id, answer("blue"));
    // The parked run was let go; the answer queued the task again, and its replay got the answer.
    await until(async () => runs.n === 2 && (await first.get(task.id, alice)).status === "working");
    before = false;
    const second = await restart(first, handler, runs);
    const done = await outcomeOf(second, task.id);
    expect(done.outcome).toEqual({ kind: "result", value: answer("blue").value });
    expect(runs.n).toBe(3);
    expect(await second.store.inputs(task.id)).toHaveLength(1);
  });

  it("an unanswered question outlives a restart: the same request stays pending, and its one answer completes the re-run", async () => {
    const runs = { n: 0 };
    const handler: Handler = async (ctx) => ctx.request("elicitation/create", ASK);
    const first = await engineWith(handler, runs);
    const task = await create(first, "resume");
    const asked = await until(async () => (await first.pendingInputs(task.id, alice))[0]);
    const second = await restart(first, handler, runs);
    // Parked: nothing runs it until its answer comes.
    expect((await second.get(task.id, alice)).status).toBe("input_required");
    expect(runs.n).toBe(1);
    const pending = await second.pendingInputs(task.id, alice);
    expect(pending.map((p) => p.id)).toEqual([asked.id]);
    await second.respond(task.id, alice, asked.id, answer("green"));
    expect((await outcomeOf(second, task.id)).outcome).toEqual({ kind: "result", value: answer("green").value });
    expect(runs.n).toBe(2);
    expect(await second.store.inputs(task.id)).toHaveLength(1);
  });

  it("a re-run that asks something else ends the replay: the lost run's unanswered question is closed, the new one is pending", async () => {
    const runs = { n: 0 };
    // The first run asks while a step of it is still running, so it is not parked: the restart re-runs it unanswered.
    const handler: Handler = async (ctx, run) =>
      run === 1
        ? Promise.all([ctx.request("elicitation/create", ASK), ctx.step("slow", () => hang(ctx))])
        : ctx.request("sampling/createMessage", { messages: [], maxTokens: 1 });
    const first = await engineWith(handler, runs);
    const task = await create(first, "resume");
    const old = await until(async () => (await first.pendingInputs(task.id, alice))[0]);
    const second = await restart(first, handler, runs);
    const now = await until(async () => (await second.pendingInputs(task.id, alice)).find((p) => p.id !== old.id));
    expect(now.method).toBe("sampling/createMessage");
    expect((await second.pendingInputs(task.id, alice)).map((p) => p.id)).toEqual([now.id]);
    expect((await second.store.getInput(task.id, old.id))?.answer).toMatchObject({ kind: "error", error: { code: -32603 } });
  });
});
