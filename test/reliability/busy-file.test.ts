/**
 * Reliability (issue 14, item 6): another connection holds the SQLite file locked (`BEGIN
 * EXCLUSIVE`, a raw better-sqlite3 connection: a second server is refused outright by the writer
 * lock) longer than the server's busy timeout (5 s). Writes that time out are refused with the
 * retryable -32003 naming the lock, the log says SQLITE_BUSY, and once the lock is released the
 * server serves again; no acknowledged task is lost or stuck.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { killAll } from "../support/cli-process.js";
import { LoadGenerator } from "../support/reliability/load-generator.js";
import { RawSession } from "../support/reliability/raw-session.js";
import { startSqliteServer } from "../support/reliability/sqlite-server.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-reliability-"));
});
afterEach(async () => {
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

const until = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("reliability: a busy SQLite file", { timeout: 120_000 }, () => {
  it("refuses writes with the retryable -32003 while another connection holds the lock past the busy timeout, then serves again, losing nothing acknowledged", async () => {
    const file = join(dir, "t.db");
    const { server, url } = await startSqliteServer(file);
    const load = new LoadGenerator({ url, concurrency: 4, pauseMs: 10 }).start();
    await until(1_000);
    const holder = new Database(file);
    holder.pragma("busy_timeout = 10000");
    holder.exec("BEGIN EXCLUSIVE");
    await until(8_000);
    holder.exec("COMMIT");
    holder.close();
    const acknowledgedWhileLocked = load.ledger.acknowledged.length;
    await until(2_000);
    await load.stop();
    // Only the lock refuses anything in this run; an answer may leave the server after the release
    // (its event loop waits out each blocked write), so all refusals count, not those seen before it.
    const refusedWhileLocked = [...load.refusals.keys()];

    expect(server.child.exitCode).toBeNull();
    expect(refusedWhileLocked).toContain("-32003 The task store is locked by another connection: nothing was written; retry shortly");
    expect(server.stderr.items.some((l) => (l["err"] as { code?: string } | undefined)?.code === "SQLITE_BUSY")).toBe(true);
    expect(load.ledger.acknowledged.length).toBeGreaterThan(acknowledgedWhileLocked);

    const session = await RawSession.open(url);
    const verdict = await load.ledger.judge(session, 30_000);
    await session.close();
    expect(verdict.examples).toEqual([]);
    expect({ lost: verdict.lost, stuck: verdict.stuck, wrong: verdict.wrong }).toEqual({ lost: 0, stuck: 0, wrong: 0 });
  });
});
