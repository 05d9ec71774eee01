/**
 * The marks that finished tasks' results were fetched (retention's "expired unread" count) are
 * held for a tenth of a second and written together: nobody waits for them, and under load they
 * then share one statement. Each keeps the time its result was fetched, and a clean close writes
 * the ones still held. Read back from the SQLite file by a second connection.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { localEventBus } from "../../src/events/local-event-bus.js";
import { FETCHED_MARK_HOLD_MS } from "../../src/runtime/fetched-mark-writer.js";
import { TaskEngine } from "../../src/runtime/task-engine.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";

const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-fetched-marks-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const origin = { sessionId: null, progressToken: null, accepts: [] };
const caller = { owner: "alice" };

/** An engine on a fresh SQLite file whose clock the test sets, and a second connection to read the file. */
async function engineOn(file: string): Promise<{
  engine: TaskEngine;
  clock: { now: number };
  fetchedAt: (id: string) => number | null;
  finished: () => Promise<string>;
  close: () => Promise<void>;
}> {
  const clock = { now: Date.parse("2026-01-01T00:00:00Z") };
  const engine = new TaskEngine({
    store: sqliteStore(join(dir, file)),
    bus: localEventBus(),
    now: () => clock.now,
    runner: async () => ({ value: { content: [] } }),
  });
  await engine.start();
  const reader = new Database(join(dir, file), { readonly: true });
  const fetchedAt = (id: string): number | null =>
    reader.prepare<[string], { fetched_at: number | null }>("SELECT fetched_at FROM tasks WHERE id = ?").get(id)?.fetched_at ?? null;
  const finished = async (): Promise<string> => {
    const task = await engine.create({ ...caller, method: "tools/call", name: "t", request: {}, origin, ttl: 600_000 });
    await engine.awaitOutcome(task.id, caller, new AbortController().signal);
    return task.id;
  };
  const close = async (): Promise<void> => {
    await engine.close();
    reader.close();
  };
  return { engine, clock, fetchedAt, finished, close };
}

describe("fetched marks", () => {
  it("are not written at the fetch, but within the hold after it, each with the time its result was fetched", async () => {
    const { clock, fetchedAt, finished, close } = await engineOn("held.db");
    try {
      const fetchedFirst = clock.now;
      const first = await finished();
      clock.now += 1_000;
      const second = await finished();
      // Fetched and answered; a few event-loop turns later (where a group commit would have
      // written them), still held.
      for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
      expect([fetchedAt(first), fetchedAt(second)]).toEqual([null, null]);
      clock.now += 60_000;
      await expect.poll(() => fetchedAt(second), { timeout: 50 * FETCHED_MARK_HOLD_MS, interval: 10 }).not.toBeNull();
      expect([fetchedAt(first), fetchedAt(second)]).toEqual([fetchedFirst, fetchedFirst + 1_000]);
    } finally {
      await close();
    }
  });

  it("still held when the engine closes are written by the close", async () => {
    const { engine, fetchedAt, finished, close } = await engineOn("closed.db");
    const id = await finished();
    expect(fetchedAt(id)).toBeNull();
    await engine.close();
    expect(fetchedAt(id)).not.toBeNull();
    await close();
  });

  it("of a result fetched again keep the first fetch's time", async () => {
    const { engine, clock, fetchedAt, finished, close } = await engineOn("again.db");
    try {
      const firstFetch = clock.now;
      const id = await finished();
      clock.now += 5_000;
      await engine.awaitOutcome(id, caller, new AbortController().signal);
      await expect.poll(() => fetchedAt(id), { timeout: 50 * FETCHED_MARK_HOLD_MS, interval: 10 }).toBe(firstFetch);
      clock.now += 5_000;
      await engine.awaitOutcome(id, caller, new AbortController().signal);
      await new Promise((resolve) => setTimeout(resolve, 2 * FETCHED_MARK_HOLD_MS));
      expect(fetchedAt(id)).toBe(firstFetch);
    } finally {
      await close();
    }
  });
});
