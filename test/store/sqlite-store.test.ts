import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { allowedSources } from "../../src/core/task-status.js";
import type { TaskOutcome } from "../../src/core/task.js";
import { COUNTS_VERSION, LEAN_INDEXES_VERSION, migrate, SCHEMA_VERSION } from "../../src/store/sqlite/schema.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { TaskStore } from "../../src/store/task-store.js";
import { newTask, storeContract } from "../../src/testing/store-contract.js";

const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-sqlite-"));
let files = 0;
const freshPath = (): string => join(dir, `store-${process.pid}-${++files}.db`);

interface OldTaskRow {
  id: string;
  owner?: string | null;
  name?: string;
  status: string;
  statusMessage?: string | null;
  createdAt?: number;
  updatedAt?: number;
  /** Only for files at or past the run queue's migration, which added the column. */
  startedAt?: number | null;
}

/** A task row written straight into a file at an older schema version, as that version's code wrote them. */
function insertOldTask(raw: Database.Database, task: OldTaskRow): void {
  const row = { owner: "alice", name: "old", statusMessage: null, createdAt: 100, updatedAt: 100, ...task };
  const started = task.startedAt !== undefined;
  raw
    .prepare(
      `INSERT INTO tasks (id, owner, method, name, request, origin, status, status_message, created_at, updated_at,
                          ttl_ms, expires_at, poll_interval_ms, retryable, outcome, progress${started ? ", started_at" : ""})
       VALUES (@id, @owner, 'tools/call', @name, '{}', '{"sessionId":null,"progressToken":null,"accepts":[]}', @status, @statusMessage,
               @createdAt, @updatedAt, NULL, NULL, 1000, 0, NULL, NULL${started ? ", @startedAt" : ""})`,
    )
    .run({
      id: row.id,
      owner: row.owner,
      name: row.name,
      status: row.status,
      statusMessage: row.statusMessage,
      createdAt: row.createdAt,
      updatedAt: row.updatedAt,
      ...(started && { startedAt: task.startedAt }),
    });
}

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

storeContract("sqliteStore (file)", () => sqliteStore(freshPath()));
storeContract("sqliteStore (:memory:)", () => sqliteStore(":memory:"));

describe("sqliteStore: durability and files", () => {
  const opened: TaskStore[] = [];
  const open = (path: string): TaskStore => {
    const store = sqliteStore(path);
    opened.push(store);
    return store;
  };

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });

  it("tasks, outcomes, messages, progress and inputs survive close and reopen", async () => {
    const path = freshPath();
    const outcome: TaskOutcome = { kind: "error", error: { code: -32000, message: "boom", data: { at: [1, 2] } } };
    const first = open(path);
    const done = await first.create(newTask());
    const waiting = await first.create(newTask({ owner: null }));
    await first.annotate(done.id, { progress: { progress: 1, total: 2 }, now: done.createdAt + 1 });
    const failed = await first.transition(done.id, allowedSources("failed"), "failed", {
      now: done.createdAt + 2,
      statusMessage: "it broke",
      outcome,
    });
    await first.transition(waiting.id, allowedSources("input_required"), "input_required", { now: waiting.createdAt + 1 });
    await first.enqueueInput({ taskId: waiting.id, id: "q1", method: "elicitation/create", params: { m: 1 }, createdAt: 5 });
    await first.answerInput(waiting.id, "q1", { kind: "result", value: { action: "decline" } });
    await first.close();

    const second = open(path);
    expect(await second.get(done.id, { owner: "alice" })).toEqual(failed);
    expect(failed?.progress).toEqual({ progress: 1, total: 2 });
    expect((await second.get(waiting.id, { owner: null }))?.status).toBe("input_required");
    expect((await second.getInput(waiting.id, "q1"))?.answer).toEqual({ kind: "result", value: { action: "decline" } });
    expect(await second.countActive(null)).toBe(1);
  });

  it("the secret survives reopening the same file, and differs between files", async () => {
    const path = freshPath();
    const first = open(path);
    const secret = await first.secret();
    await first.close();
    expect((await open(path).secret()).equals(secret)).toBe(true);
    expect((await open(freshPath()).secret()).equals(secret)).toBe(false);
  });

  it("two connections to one file share the compare-and-set: a terminal write from one blocks the other", async () => {
    const path = freshPath();
    const a = open(path);
    const b = open(path);
    const task = await a.create(newTask());
    const cancelled = await b.transition(task.id, allowedSources("cancelled"), "cancelled", { now: task.createdAt + 1 });
    expect(cancelled?.status).toBe("cancelled");
    expect(await a.transition(task.id, allowedSources("completed"), "completed", { now: task.createdAt + 2 })).toBeNull();
    expect((await a.get(task.id, { any: true }))?.status).toBe("cancelled");
    expect((await a.secret()).equals(await b.secret())).toBe(true);
  });

  it("creates missing parent directories", async () => {
    const path = join(dir, "nested", "deeper", "tasks.db");
    const store = open(path);
    const task = await store.create(newTask());
    expect((await store.get(task.id, { any: true }))?.id).toBe(task.id);
  });

  it("uses WAL journaling and records the schema version", async () => {
    const path = freshPath();
    await open(path).close();
    const raw = new Database(path, { readonly: true });
    try {
      expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(raw.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
    } finally {
      raw.close();
    }
  });

  it("reopening an up-to-date file migrates nothing and keeps the data", async () => {
    const path = freshPath();
    const first = open(path);
    const task = await first.create(newTask());
    await first.close();
    const second = open(path);
    await second.close();
    const third = open(path);
    expect((await third.get(task.id, { any: true }))?.id).toBe(task.id);
  });

  it("the counts migration counts the tasks an older file holds, and the counts stay exact after", async () => {
    const path = freshPath();
    const raw = new Database(path);
    migrate(raw, COUNTS_VERSION - 1);
    insertOldTask(raw, { id: "t-1", status: "working" });
    insertOldTask(raw, { id: "t-2", status: "failed" });
    insertOldTask(raw, { id: "t-3", owner: null, status: "failed" });
    insertOldTask(raw, { id: "t-4", owner: "bob", name: "other", status: "completed" });
    raw.close();

    const store = open(path);
    expect(await store.countByStatus({ scope: { any: true } })).toEqual({
      working: 1,
      input_required: 0,
      completed: 1,
      failed: 2,
      cancelled: 0,
    });
    expect(await store.countByStatus({ scope: { owner: null } })).toEqual({
      working: 0,
      input_required: 0,
      completed: 0,
      failed: 1,
      cancelled: 0,
    });
    expect(await store.countByStatus({ scope: { owner: "alice" }, name: "old" })).toEqual({
      working: 1,
      input_required: 0,
      completed: 0,
      failed: 1,
      cancelled: 0,
    });
    await store.transition("t-1", allowedSources("cancelled"), "cancelled", { now: 300 });
    expect(await store.countByStatus({ scope: { owner: "alice" } })).toEqual({
      working: 0,
      input_required: 0,
      completed: 0,
      failed: 1,
      cancelled: 1,
    });
  });

  it("upgrades a schema-1 file: tasks are kept and get a timeline from their row", async () => {
    const path = freshPath();
    const raw = new Database(path);
    migrate(raw, 1);
    insertOldTask(raw, { id: "t-working", status: "working", createdAt: 100, updatedAt: 150 });
    insertOldTask(raw, { id: "t-failed", status: "failed", statusMessage: "it broke", createdAt: 200, updatedAt: 260 });
    raw.close();

    const store = open(path);
    expect(await store.history("t-working")).toEqual([{ status: "working", statusMessage: null, at: 100 }]);
    expect(await store.history("t-failed")).toEqual([
      { status: "working", statusMessage: null, at: 200 },
      { status: "failed", statusMessage: "it broke", at: 260 },
    ]);
    expect((await store.search({ scope: { any: true } }, null, 10)).map((t) => t.id)).toEqual(["t-failed", "t-working"]);
    // And new writes extend the timeline from there.
    await store.transition("t-working", allowedSources("cancelled"), "cancelled", { now: 300 });
    expect((await store.history("t-working")).map((c) => c.status)).toEqual(["working", "cancelled"]);
  });

  it("an upgrade drops the index of live tasks; the live tasks and the per-owner counts read the same from what remains", async () => {
    const path = freshPath();
    const raw = new Database(path);
    migrate(raw, LEAN_INDEXES_VERSION - 1);
    insertOldTask(raw, { id: "t-queued", status: "working", createdAt: 300, updatedAt: 300, startedAt: null });
    insertOldTask(raw, { id: "t-running", status: "working", createdAt: 100, updatedAt: 100, startedAt: 110 });
    insertOldTask(raw, { id: "t-asking", status: "input_required", createdAt: 200, updatedAt: 200, startedAt: 210 });
    insertOldTask(raw, { id: "t-done", status: "completed", createdAt: 50, updatedAt: 60, startedAt: 55 });
    insertOldTask(raw, { id: "t-other", owner: null, status: "working", createdAt: 150, updatedAt: 150, startedAt: 160 });
    // Moved to input_required without a claim (the store allowed it): it counts as started after the upgrade.
    insertOldTask(raw, { id: "t-unclaimed", owner: "bob", status: "input_required", createdAt: 250, updatedAt: 250, startedAt: null });
    const indexes = (db: Database.Database): string[] =>
      db
        .prepare<[], { name: string }>(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'tasks'`)
        .all()
        .map((r) => r.name);
    expect(indexes(raw)).toContain("tasks_active");
    raw.close();

    const store = open(path);
    expect((await store.activeTasks(10)).map((t) => t.id)).toEqual(["t-running", "t-other", "t-asking", "t-unclaimed", "t-queued"]);
    expect((await store.activeTasks(2)).map((t) => t.id)).toEqual(["t-running", "t-other"]);
    expect(await store.countActive("alice")).toBe(3);
    expect(await store.countActive(null)).toBe(1);
    expect(await store.countActive("bob")).toBe(1);
    expect(await store.countStored("alice")).toBe(4);
    expect(await store.countStored("carol")).toBe(0);
    await store.close();
    const after = new Database(path, { readonly: true });
    try {
      expect(indexes(after)).not.toContain("tasks_active");
    } finally {
      after.close();
    }
  });

  it("refuses a file written by a newer schema", () => {
    const path = freshPath();
    const raw = new Database(path);
    raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    expect(() => sqliteStore(path)).toThrow(/newer/);
  });

  it("tasks/list and sweeps use the indexes rather than scanning the table", () => {
    const path = freshPath();
    open(path);
    const raw = new Database(path, { readonly: true });
    try {
      const plan = (sql: string): string =>
        raw
          .prepare<unknown[], { detail: string }>(`EXPLAIN QUERY PLAN ${sql}`)
          .all()
          .map((r) => r.detail)
          .join("; ");
      expect(plan(`SELECT * FROM tasks WHERE owner IS 'a' AND (created_at, id) > (1, 'x') ORDER BY created_at, id LIMIT 5`)).toMatch(
        /USING INDEX tasks_owner_created/,
      );
      // The per-owner caps read the kept counts (a few rows), not the owner's tasks.
      expect(
        plan(`SELECT coalesce(sum(n), 0) FROM task_counts WHERE owner_key = 'Oa' AND status IN ('working', 'input_required')`),
      ).toMatch(/SEARCH task_counts USING PRIMARY KEY \(owner_key=\?/);
      expect(
        plan(`SELECT * FROM tasks WHERE status IN ('working', 'input_required') AND expires_at <= 5 ORDER BY expires_at, id LIMIT 5`),
      ).toBe("SEARCH tasks USING INDEX tasks_expires (expires_at<?)");
      expect(
        plan(
          `SELECT * FROM tasks WHERE status IN ('completed', 'failed', 'cancelled') AND expires_at <= 5 ORDER BY expires_at, id LIMIT 5`,
        ),
      ).toBe("SEARCH tasks USING INDEX tasks_expires (expires_at<?)");
      expect(plan(`SELECT * FROM tasks ORDER BY created_at DESC, id DESC LIMIT 5`)).toMatch(/USING INDEX tasks_created/);
      // The live tasks are read from the run queue's two partial indexes; the table is never scanned.
      const live = plan(`SELECT * FROM (
          SELECT * FROM tasks INDEXED BY tasks_queued WHERE status = 'working' AND started_at IS NULL
          UNION ALL
          SELECT * FROM tasks INDEXED BY tasks_started WHERE started_at IS NOT NULL AND status IN ('working', 'input_required')
        ) ORDER BY created_at, id LIMIT 5`);
      expect(live).toMatch(/SCAN tasks USING INDEX tasks_queued/);
      expect(live).toMatch(/SCAN tasks USING INDEX tasks_started/);
      expect(live).not.toMatch(/SCAN tasks(;|$)/);
    } finally {
      raw.close();
    }
  });
});
