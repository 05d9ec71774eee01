/**
 * Reliability (issue 14, item 6): kill -9 of the SQLite server under concurrent load, once, then a
 * restart. Every task whose CreateTaskResult reached the client is known afterwards and terminal
 * with the result its arguments imply — `steps` (recovery "resume") completes from its
 * checkpoints, `sleep` (no recovery) is failed with a message saying the server stopped. The
 * three-kill run is `npm run bench:reliability`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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

describe("reliability: kill -9 under load on SQLite", { timeout: 120_000 }, () => {
  it("loses no acknowledged task, leaves none stuck, and gives each the result its arguments imply", async () => {
    const file = join(dir, "t.db");
    const first = await startSqliteServer(file);
    const load = new LoadGenerator({ url: first.url, concurrency: 8 }).start();
    await until(2_000);
    const before = load.ledger.acknowledged.length;
    expect(await first.server.kill("SIGKILL")).toEqual({ code: null, signal: "SIGKILL" });

    const second = await startSqliteServer(file);
    load.retarget(second.url);
    await until(1_500);
    await load.stop();

    const session = await RawSession.open(second.url);
    const verdict = await load.ledger.judge(session, 30_000);
    await session.close();
    expect(before).toBeGreaterThan(0);
    expect(load.ledger.acknowledged.length).toBeGreaterThan(before); // the restarted server took load too
    expect(verdict.examples).toEqual([]);
    expect({ lost: verdict.lost, stuck: verdict.stuck, wrong: verdict.wrong }).toEqual({ lost: 0, stuck: 0, wrong: 0 });
    expect(verdict.completed + verdict.failedSaidWhy).toBe(verdict.acknowledged);
    expect(load.echoes.wrong).toBe(0);
  });
});
