/**
 * Reliability (issue 14, item 6): the disk under the SQLite file fills up under load. Requests
 * that need to write are refused with a JSON-RPC error whose message names the condition, the
 * log says what happened, the process keeps running, and once space is back it serves again;
 * no acknowledged task is lost or left stuck.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { killAll } from "../support/cli-process.js";
import { LoadGenerator } from "../support/reliability/load-generator.js";
import { RawSession } from "../support/reliability/raw-session.js";
import { mountSmallDisk, type SmallDisk } from "../support/reliability/small-disk.js";
import { startSqliteServer } from "../support/reliability/sqlite-server.js";

let dir: string;
let disk: SmallDisk | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-reliability-"));
});
afterEach(async () => {
  await killAll();
  disk?.unmount();
  disk = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const until = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("reliability: a full disk under the SQLite file", { timeout: 120_000 }, () => {
  it("refuses writes with a clear error while the disk is full, keeps running, serves again once space is back, and loses nothing acknowledged", async () => {
    disk = mountSmallDisk(dir, "16M");
    const { server, url } = await startSqliteServer(join(disk.dir, "t.db"));
    const load = new LoadGenerator({ url, concurrency: 4, pauseMs: 10 }).start();
    await until(1_000);
    disk.fill();
    await until(3_000);
    disk.free();
    const acknowledgedWhileFull = load.ledger.acknowledged.length;
    await until(3_000);
    await load.stop();
    const refusedWhileFull = [...load.refusals.keys()]; // only the full disk refuses anything here

    expect(server.child.exitCode).toBeNull();
    expect(refusedWhileFull).toContain("-32603 The task store's disk is full: nothing was written; retry once space is freed");
    // The log names the driver's condition; the wire only the words above (T-ERR-4).
    expect(server.stderr.items.some((l) => (l["err"] as { code?: string } | undefined)?.code === "SQLITE_FULL")).toBe(true);
    expect(load.ledger.acknowledged.length).toBeGreaterThan(acknowledgedWhileFull);

    const session = await RawSession.open(url);
    const verdict = await load.ledger.judge(session, 30_000);
    await session.close();
    expect(verdict.examples).toEqual([]);
    expect({ lost: verdict.lost, stuck: verdict.stuck, wrong: verdict.wrong }).toEqual({ lost: 0, stuck: 0, wrong: 0 });
  });
});
