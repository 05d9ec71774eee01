/**
 * A task's status change that a request of this process is waiting on (a blocked result request,
 * a watch) is committed as soon as the promise jobs that produced it are done, not at the end of
 * the event-loop turn with every other request that turn brings: the waiter's answer is not held
 * behind them. A change nobody waits on keeps the turn's group commit.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { localEventBus } from "../../src/events/local-event-bus.js";
import { TaskEngine } from "../../src/runtime/task-engine.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { deferred } from "../support/conformance.js";

const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-awaited-commit-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const origin = { sessionId: null, progressToken: null, accepts: [] };

/**
 * Starts a task whose handler ends when told, ends it from inside a timer callback (as a handler
 * that sleeps does), and reports what another connection to the file reads at the end of that
 * turn (the first check-phase callback after the timer): `completed` when the change was committed
 * within the timer's promise jobs, `working` when it waits for the turn's group commit.
 */
async function statusAtTurnEnd(file: string, waited: boolean): Promise<{ atTurnEnd: string | undefined; answered: string }> {
  const store = sqliteStore(join(dir, file));
  const finish = deferred();
  const started = deferred();
  const engine = new TaskEngine({
    store,
    bus: localEventBus(),
    runner: async () => {
      started.resolve();
      await finish.promise;
      return { value: { content: [] } };
    },
  });
  await engine.start();
  const reader = new Database(join(dir, file), { readonly: true });
  try {
    const caller = { owner: "alice" };
    const task = await engine.create({ ...caller, method: "tools/call", name: "t", request: {}, origin, ttl: 60_000 });
    await started.promise;
    const waiting = waited ? engine.awaitOutcome(task.id, caller, new AbortController().signal) : null;
    // Let the waiter's lookup finish: it is counted from there on.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const atTurnEnd = await new Promise<string | undefined>((resolve) => {
      setTimeout(() => {
        finish.resolve();
        setImmediate(() =>
          resolve(reader.prepare<[string], { status: string }>("SELECT status FROM tasks WHERE id = ?").get(task.id)?.status),
        );
      }, 0);
    });
    const answered = waiting ? (await waiting).status : ((await engine.get(task.id, caller))?.status ?? "missing");
    return { atTurnEnd, answered };
  } finally {
    reader.close();
    await engine.close();
  }
}

describe("status changes a request waits on", () => {
  it("commits the outcome of a task a result request waits on within the promise jobs that produced it", async () => {
    expect(await statusAtTurnEnd("waited.db", true)).toEqual({ atTurnEnd: "completed", answered: "completed" });
  });

  it("commits the outcome of a task nobody waits on with the rest of its turn", async () => {
    expect(await statusAtTurnEnd("unwaited.db", false)).toEqual({ atTurnEnd: "working", answered: "completed" });
  });
});
