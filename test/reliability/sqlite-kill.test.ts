/**
 * Reliability: kill -9 of the SQLite server under concurrent load, once, then a
 * restart. Every task whose CreateTaskResult reached the client is known afterwards and terminal
 * with the result its arguments imply — `steps` (recovery "resume") completes from its
 * checkpoints, `sleep` (no recovery) is failed with a message saying the server stopped. The
 * three-kill run is `npm run bench:reliability`.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LoadGenerator } from "../support/reliability/load-generator.js";
import { expectNothingLost, scratchDirPerTest, until } from "../support/reliability/scenario.js";
import { startSqliteServer } from "../support/reliability/sqlite-server.js";

const scratch = scratchDirPerTest();

describe("reliability: kill -9 under load on SQLite", { timeout: 120_000 }, () => {
  it("loses no acknowledged task, leaves none stuck, and gives each the result its arguments imply", async () => {
    const file = join(scratch(), "t.db");
    const first = await startSqliteServer(file);
    const load = new LoadGenerator({ url: first.url, concurrency: 8 }).start();
    await until(2_000);
    const before = load.ledger.acknowledged.length;
    expect(await first.server.kill("SIGKILL")).toEqual({ code: null, signal: "SIGKILL" });

    const second = await startSqliteServer(file);
    load.retarget(second.url);
    await until(1_500);
    await load.stop();

    const verdict = await expectNothingLost(load.ledger, second.url);
    expect(before).toBeGreaterThan(0);
    expect(load.ledger.acknowledged.length).toBeGreaterThan(before); // the restarted server took load too
    expect(verdict.completed + verdict.failedSaidWhy).toBe(verdict.acknowledged);
    expect(load.echoes.wrong).toBe(0);
  });
});
