/**
 * The engine's era-neutral operations: every one is owner-checked like a lookup (T-SEC-3), and
 * none needs a protocol binding to be driven.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { TaskContext } from "../../src/runtime/task-context.js";
import { localEventBus } from "../../src/events/local-event-bus.js";
import { TaskEngine, type TaskChange } from "../../src/runtime/task-engine.js";
import { memoryStore } from "../../src/store/memory/memory-store.js";

const alice = { owner: "alice" };
const mallory = { owner: "mallory" };
const origin = { sessionId: null, progressToken: null, accepts: ["elicitation/create"] };

let engine: TaskEngine | null = null;
afterEach(async () => {
  await engine?.close();
  engine = null;
});

/** An engine whose one task asks a question and ends with the answer it got. */
async function askingEngine(): Promise<TaskEngine> {
  engine = new TaskEngine({
    store: memoryStore(),
    bus: localEventBus(),
    runner: async (_task, ctx: TaskContext) => {
      const answer = await ctx.request("elicitation/create", { message: "colour?" });
      return { value: { content: [{ type: "text", text: JSON.stringify(answer) }] } };
    },
  });
  await engine.start();
  return engine;
}

async function createTask(e: TaskEngine) {
  return e.create({ ...alice, method: "tools/call", name: "ask", request: {}, origin, ttl: 60_000 });
}

async function firstPending(e: TaskEngine, taskId: string) {
  for (;;) {
    const pending = await e.pendingInputs(taskId, alice);
    if (pending.length > 0) return pending[0]!;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("engine operations", () => {
  it("pendingInputs lists a task's open questions to its owner, and answers another principal 'not found' (T-SEC-3)", async () => {
    const e = await askingEngine();
    const task = await createTask(e);
    const input = await firstPending(e, task.id);
    expect(input).toMatchObject({ method: "elicitation/create", params: { message: "colour?" } });
    await expect(e.pendingInputs(task.id, mallory)).rejects.toMatchObject({ kind: "not_found" });
  });

  it("respond from another principal is 'not found' and changes nothing; the owner's answer completes the task", async () => {
    const e = await askingEngine();
    const task = await createTask(e);
    const input = await firstPending(e, task.id);
    const answer = { kind: "result" as const, value: { action: "accept", content: { colour: "blue" } } };
    await expect(e.respond(task.id, mallory, input.id, answer)).rejects.toMatchObject({ kind: "not_found" });
    expect(await e.pendingInputs(task.id, alice)).toHaveLength(1);
    expect(await e.respond(task.id, alice, input.id, answer)).toBe(true);
    const done = await e.awaitOutcome(task.id, alice, new AbortController().signal);
    expect(done.status).toBe("completed");
  });

  it("respond to an unknown or already answered key returns false (the first answer wins)", async () => {
    const e = await askingEngine();
    const task = await createTask(e);
    const input = await firstPending(e, task.id);
    const answer = { kind: "result" as const, value: { action: "decline" } };
    expect(await e.respond(task.id, alice, "no-such-key", answer)).toBe(false);
    expect(await e.respond(task.id, alice, input.id, answer)).toBe(true);
    expect(await e.respond(task.id, alice, input.id, { kind: "result", value: { action: "accept" } })).toBe(false);
  });

  it("watch yields the task at once, again when it asks a question (inputsMayHaveChanged), and last in its terminal status", async () => {
    const e = await askingEngine();
    const task = await createTask(e);
    const seen: TaskChange[] = [];
    for await (const change of e.watch(task.id, alice, new AbortController().signal)) {
      seen.push(change);
      if (change.task.status === "input_required") {
        const [input] = await e.pendingInputs(task.id, alice);
        await e.respond(task.id, alice, input!.id, { kind: "result", value: { action: "decline" } });
      }
    }
    expect(seen[0]).toMatchObject({ woken: false });
    expect(seen.some((change) => change.task.status === "input_required" && change.inputsMayHaveChanged)).toBe(true);
    expect(seen.at(-1)?.task.status).toBe("completed");
  });

  it("watch of another principal's task fails with 'not found' before yielding anything (T-SEC-3)", async () => {
    const e = await askingEngine();
    const task = await createTask(e);
    const watching = e.watch(task.id, mallory, new AbortController().signal);
    await expect(watching.next()).rejects.toMatchObject({ kind: "not_found" });
  });

  it("watch ends with an error when its signal aborts, so an abandoned wait never hangs", async () => {
    const e = await askingEngine();
    const task = await createTask(e);
    const abandon = new AbortController();
    const watching = (async () => {
      for await (const change of e.watch(task.id, alice, abandon.signal)) if (change.task.status === "input_required") abandon.abort();
    })();
    await expect(watching).rejects.toThrow(/abandoned/);
  });
});
