/**
 * The caps on new tasks (active tasks per owner, the bounded queue) against idempotency keys, on
 * a real SQLite file: a keyed retry asks for a task that exists, so a caller at its cap gets that
 * task back; only a creation that would store a new task is refused.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { localEventBus } from "../../src/events/local-event-bus.js";
import type { EngineOptions } from "../../src/runtime/engine-options.js";
import { TaskEngine } from "../../src/runtime/task-engine.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { requestedKey } from "../../src/core/idempotency.js";
import { TaskError } from "../../src/core/errors.js";

const origin = { sessionId: null, progressToken: null, accepts: [] };
const dir = mkdtempSync(join(tmpdir(), "keyed-cap-"));
const engines: TaskEngine[] = [];
const releases: Array<() => void> = [];
afterEach(async () => {
  for (const release of releases.splice(0)) release();
  for (const e of engines.splice(0)) {
    await e.close();
    await e.store.close();
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
/** Handlers hold until the test ends, so every task stays active (or queued). */
async function heldEngine(options: Partial<EngineOptions>): Promise<TaskEngine> {
  const engine = new TaskEngine({
    store: sqliteStore(join(dir, `${++files}.db`)),
    bus: localEventBus(),
    runner: async () => {
      await new Promise<void>((resolve) => releases.push(resolve));
      return { value: { content: [] } };
    },
    ...options,
  });
  engines.push(engine);
  await engine.start();
  return engine;
}

const input = (args: Record<string, unknown>) => ({
  owner: "alice",
  method: "tools/call",
  name: "work",
  request: { name: "work", arguments: args },
  origin,
  ttl: 60_000,
});
const keyed = (e: TaskEngine, key: string, args: Record<string, unknown> = { n: 1 }) =>
  e.createKeyed(input(args), requestedKey(key, "work", args));

async function refusal(creation: Promise<unknown>): Promise<TaskError> {
  const error = await creation.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TaskError);
  return error as TaskError;
}

describe("keyed retries at a cap", () => {
  it("a keyed retry from a caller at its active-task cap gets its task back", async () => {
    const engine = await heldEngine({ maxActivePerOwner: 1 });
    const first = await keyed(engine, "k-1");
    const again = await keyed(engine, "k-1");
    expect(again).toMatchObject({ created: false });
    expect(again.task.id).toBe(first.task.id);
  });

  it("a new keyed creation from a caller at its active-task cap is still refused", async () => {
    const engine = await heldEngine({ maxActivePerOwner: 1 });
    await keyed(engine, "k-1");
    const error = await refusal(keyed(engine, "k-2"));
    expect(error.message).toMatch(/Too many active tasks/);
  });

  it("a keyed retry from a caller whose queue is full gets its queued task back", async () => {
    const engine = await heldEngine({ maxRunning: 1, maxQueuedPerOwner: 1 });
    await keyed(engine, "running");
    await new Promise((resolve) => setTimeout(resolve, 100));
    const queued = await keyed(engine, "queued");
    const again = await keyed(engine, "queued");
    expect(again).toMatchObject({ created: false });
    expect(again.task.id).toBe(queued.task.id);
    const error = await refusal(keyed(engine, "third"));
    expect(error.message).toMatch(/Too many queued tasks/);
  });

  it("a key reused with other arguments at the cap is the conflict, not the cap's refusal", async () => {
    const engine = await heldEngine({ maxActivePerOwner: 1 });
    await keyed(engine, "k-1", { n: 1 });
    const error = await refusal(keyed(engine, "k-1", { n: 2 }));
    expect(error.data).toMatchObject({ type: "idempotency_key_conflict", idempotencyKey: "k-1" });
  });
});
