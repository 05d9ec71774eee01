/**
 * Reliability: another connection holds the SQLite file locked (`BEGIN
 * EXCLUSIVE`, a raw better-sqlite3 connection: a second server is refused outright by the writer
 * lock) longer than the server's busy timeout (5 s). A write that times out is refused with the
 * retryable -32003 naming the lock, the log says SQLITE_BUSY, and once the lock is released the
 * server serves load again; no acknowledged task is lost or stuck. The lock is taken between two
 * spells of load, once the first has settled: a handler's own writes wait out a lock and are
 * retried (src/runtime/storage-retry.ts), so under load which request meets the timeout is luck.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { LoadGenerator } from "../support/reliability/load-generator.js";
import { RawSession, RpcAnswerError } from "../support/reliability/raw-session.js";
import { expectNothingLost, scratchDirPerTest, until } from "../support/reliability/scenario.js";
import { startSqliteServer } from "../support/reliability/sqlite-server.js";

const scratch = scratchDirPerTest();

describe("reliability: a busy SQLite file", { timeout: 120_000 }, () => {
  it("refuses a write with the retryable -32003 while another connection holds the lock past the busy timeout, then serves again, losing nothing acknowledged", async () => {
    const file = join(scratch(), "t.db");
    const { server, url } = await startSqliteServer(file);
    const before = new LoadGenerator({ url, concurrency: 4, pauseMs: 10 }).start();
    await until(1_000);
    await before.stop();
    const probe = await RawSession.open(url);
    await before.ledger.judge(probe, 30_000); // settled: no handler writes while the lock is held

    const holder = new Database(file);
    holder.exec("BEGIN EXCLUSIVE");
    const refused = probe.request("tools/call", { name: "sleep", arguments: { ms: 10 }, task: { ttl: 60_000 } }).then(
      () => undefined,
      (error: unknown) => (error instanceof RpcAnswerError ? error.error : error),
    );
    // The lock is held until the request is answered (past the 5 s busy timeout), not for a fixed
    // time: on a loaded machine the server may reach the write seconds after the request was sent.
    const answered = await Promise.race([refused.then(() => true), until(60_000).then(() => false)]);
    holder.exec("COMMIT");
    holder.close();
    expect(answered).toBe(true);
    expect(await refused).toEqual({
      code: -32003,
      message: "The task store is locked by another connection: nothing was written; retry shortly",
      data: { reason: "store_busy", retryAfterMs: 1000 },
    });
    expect(server.stderr.items.some((l) => (l["err"] as { code?: string } | undefined)?.code === "SQLITE_BUSY")).toBe(true);
    await probe.close();

    const load = new LoadGenerator({ url, concurrency: 4, pauseMs: 10 }).start();
    await until(2_000);
    await load.stop();
    expect(server.child.exitCode).toBeNull();
    expect(load.ledger.acknowledged.length).toBeGreaterThan(0);
    for (const ack of before.ledger.acknowledged) load.ledger.add(ack.taskId, ack.call);

    await expectNothingLost(load.ledger, url);
  });
});
