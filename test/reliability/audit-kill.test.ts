/**
 * Reliability of the audit log (T-SEC-5): a task's `created` line is written before its
 * CreateTaskResult is sent, so a kill -9 under load never leaves an acknowledged task without
 * its line — the lines already handed to the kernel (here: the pipe the test reads) outlive the
 * process. The outcome lines, batched until the running promise jobs end, are all written by a
 * process that stops normally.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { LoadGenerator } from "../support/reliability/load-generator.js";
import { scratchDirPerTest, until } from "../support/reliability/scenario.js";
import { startSqliteServer } from "../support/reliability/sqlite-server.js";

const scratch = scratchDirPerTest();

describe("reliability: the audit log after a kill -9 under load", { timeout: 120_000 }, () => {
  it("holds a created line for every task whose creation was acknowledged (T-SEC-5)", async () => {
    const { server, url } = await startSqliteServer(join(scratch(), "t.db"));
    const load = new LoadGenerator({ url, concurrency: 16, pauseMs: 0 }).start();
    // Under load: the kill lands while creations are being acknowledged and their lines written.
    while (load.ledger.acknowledged.length < 300) await until(50);
    expect(await server.kill("SIGKILL")).toEqual({ code: null, signal: "SIGKILL" });
    await load.stop();

    const audited = new Set(server.stderr.items.filter((line) => line["audit"] === "created").map((line) => line["taskId"]));
    const acknowledged = load.ledger.acknowledged.map((a) => a.taskId);
    const missing = acknowledged.filter((taskId) => !audited.has(taskId));
    expect(acknowledged.length).toBeGreaterThanOrEqual(300);
    expect(missing).toEqual([]);
  });

  it("holds a completed or failed line for every task that ended, after a SIGTERM stop under load (T-SEC-5)", async () => {
    const file = join(scratch(), "t.db");
    const { server, url } = await startSqliteServer(file);
    const load = new LoadGenerator({ url, concurrency: 16, pauseMs: 0 }).start();
    while (load.ledger.acknowledged.length < 300) await until(50);
    await load.stop();
    expect((await server.kill("SIGTERM")).code).toBe(0);

    const db = new Database(file, { readonly: true });
    const ended = db
      .prepare<[], { id: string; status: string }>(`SELECT id, status FROM tasks WHERE status IN ('completed', 'failed')`)
      .all();
    db.close();
    const lines = new Map(
      server.stderr.items
        .filter((line) => line["audit"] === "completed" || line["audit"] === "failed")
        .map((line) => [line["taskId"], line["audit"]]),
    );
    expect(ended.length).toBeGreaterThanOrEqual(100);
    expect(ended.filter((task) => lines.get(task.id) !== task.status)).toEqual([]);
  });
});
