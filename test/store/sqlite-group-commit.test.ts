/**
 * The SQLite store's group commit (src/store/sqlite/group-commit.ts): the creations and status
 * changes of one event-loop turn share one transaction, each acknowledged only after that commit;
 * statements keep the order of the calls; one failing write fails only its own caller.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { StreamEventStore } from "../../src/store/stream-event-store.js";
import type { TaskStore } from "../../src/store/task-store.js";
import { newTask } from "../../src/testing/store-contract.js";

const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-group-commit-"));
let files = 0;
const freshPath = (): string => join(dir, `store-${process.pid}-${++files}.db`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const opened: TaskStore[] = [];
const open = (path: string): TaskStore => {
  const store = sqliteStore(path);
  opened.push(store);
  return store;
};
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

const walBytes = (path: string): number => statSync(`${path}-wal`).size;

describe("sqliteStore: group commit", () => {
  it("commits the creations of one turn together: 50 at once grow the WAL by a fraction of what 50 one after another do", async () => {
    const grouped = freshPath();
    const a = open(grouped);
    await a.create(newTask()); // the WAL exists from here on
    const before = walBytes(grouped);
    await Promise.all(Array.from({ length: 50 }, () => a.create(newTask())));
    const together = walBytes(grouped) - before;

    const single = freshPath();
    const b = open(single);
    await b.create(newTask());
    const start = walBytes(single);
    for (let i = 0; i < 50; i++) await b.create(newTask());
    const apart = walBytes(single) - start;

    expect(together).toBeGreaterThan(0);
    expect(together * 5).toBeLessThan(apart);
  });

  it("acknowledges each write only once it is committed: another connection reads it the moment its promise resolves", async () => {
    const path = freshPath();
    const store = open(path);
    await store.create(newTask());
    const reader = new Database(path, { readonly: true });
    try {
      const stored = reader.prepare<[string], { status: string }>("SELECT status FROM tasks WHERE id = ?");
      const seen = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const task = await store.create(newTask());
          const created = stored.get(task.id)?.status;
          if (i % 2 === 1) return [created, undefined];
          const moved = await store.transition(task.id, ["working"], "completed", {
            outcome: { kind: "result", value: {} },
            now: Date.now(),
          });
          return [created, moved && stored.get(task.id)?.status];
        }),
      );
      expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => ["working", i % 2 === 1 ? undefined : "completed"]));
    } finally {
      reader.close();
    }
  });

  it("keeps the order of the calls: a read made right after a creation still queued sees it", async () => {
    const store = open(freshPath());
    const creating = store.create(newTask());
    const task = newTask();
    const second = store.create(task);
    const read = store.get(task.id, { any: true });
    expect((await read)?.id).toBe(task.id);
    await Promise.all([creating, second]);
  });

  it("fails only the write that failed: a duplicate id among twenty creations of one turn, the other nineteen stored", async () => {
    const store = open(freshPath());
    const existing = await store.create(newTask());
    const tasks = Array.from({ length: 20 }, (_, i) => (i === 7 ? { ...newTask(), id: existing.id } : newTask()));
    const settled = await Promise.allSettled(tasks.map((task) => store.create(task)));
    expect(settled.filter((s) => s.status === "rejected")).toHaveLength(1);
    expect(settled[7]?.status).toBe("rejected");
    for (const [i, task] of tasks.entries()) {
      if (i !== 7) expect((await store.get(task.id, { any: true }))?.status).toBe("working");
    }
  });

  it("groups the SSE events of one turn and the marks of fetched results too, each read seeing what was written before it", async () => {
    const grouped = freshPath();
    const store = open(grouped);
    const events = store.streamEvents as StreamEventStore;
    const append = (streamId: string, i: number): Promise<number> =>
      events.append({ sessionKey: "s", streamId, message: `{"n":${i}}`, now: Date.now() });
    await append("warm", 0);
    const before = walBytes(grouped);
    const ids = await Promise.all(Array.from({ length: 50 }, (_, i) => append("a", i)));
    const together = walBytes(grouped) - before;
    const start = walBytes(grouped);
    for (let i = 0; i < 50; i++) await append("b", i);
    const apart = walBytes(grouped) - start;
    expect(together * 5).toBeLessThan(apart);
    // Ids in the order of the calls, as without grouping.
    expect(ids).toEqual([...ids].sort((x, y) => x - y));

    // Not awaited: the reads that follow flush the group before they look.
    void append("c", 1);
    const last = append("c", 2);
    expect((await events.after("s", "c", 0, 10)).map((e) => e.message)).toEqual(['{"n":1}', '{"n":2}']);
    expect(await events.streamOf("s", await last)).toBe("c");

    const done = await store.create(newTask());
    await store.transition(done.id, ["working"], "completed", { outcome: { kind: "result", value: {} }, now: Date.now() });
    const first = store.markFetched(done.id, Date.now());
    const again = store.markFetched(done.id, Date.now());
    expect([await first, await again]).toEqual([true, false]);
  });

  it("commits a status change a request waits on (awaited) before the turn ends, and one nobody waits on with the rest of its turn", async () => {
    const store = open(freshPath());
    const outcome = { kind: "result", value: {} } as const;
    const order = async (awaited: boolean): Promise<string[]> => {
      const task = await store.create(newTask());
      const seen: string[] = [];
      // Registered before the write is queued: the group's own end-of-turn commit runs after it.
      setImmediate(() => seen.push("end of turn"));
      await store.transition(task.id, ["working"], "completed", { outcome, now: Date.now(), ...(awaited && { awaited: true }) });
      seen.push("committed");
      await new Promise((resolve) => setImmediate(resolve));
      return seen;
    };
    expect(await order(true)).toEqual(["committed", "end of turn"]);
    expect(await order(false)).toEqual(["end of turn", "committed"]);
  });
});
