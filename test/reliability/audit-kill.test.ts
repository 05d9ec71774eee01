/**
 * Reliability of the audit log (T-SEC-5): a task's `created` line is written before its
 * CreateTaskResult is sent, so a kill -9 under load never leaves an acknowledged task without
 * its line — the lines already handed to the kernel (here: the pipe the test reads) outlive the
 * process.
 */
import { join } from "node:path";
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
});
