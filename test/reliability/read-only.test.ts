/**
 * Reliability: the SQLite file's filesystem is read-only (a read-only
 * remount; as root, chmod 444 would not stop the writes). A server refuses to start on it with a
 * message naming the file and the condition, rather than SQLite's bare "unable to open database
 * file"; once the filesystem is writable again the next start serves every acknowledged task.
 * A running server cannot be switched to read-only under it (the kernel refuses the remount
 * while files are open for writing), so the start is where the condition shows.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CliProcess } from "../support/cli-process.js";
import { LoadGenerator } from "../support/reliability/load-generator.js";
import { mountSmallDisk, type SmallDisk } from "../support/reliability/small-disk.js";
import { expectNothingLost, scratchDirPerTest, until } from "../support/reliability/scenario.js";
import { LOAD_LIMITS, startSqliteServer } from "../support/reliability/sqlite-server.js";

let disk: SmallDisk | undefined;
const scratch = scratchDirPerTest(() => {
  disk?.unmount();
  disk = undefined;
});

describe("reliability: a read-only SQLite file", { timeout: 120_000 }, () => {
  it("refuses to start with a message naming the file and the read-only filesystem, and serves every acknowledged task once it is writable", async () => {
    disk = mountSmallDisk(scratch(), "16M");
    const file = join(disk.dir, "t.db");
    const first = await startSqliteServer(file);
    const load = new LoadGenerator({ url: first.url, concurrency: 4 }).start();
    await until(1_500);
    await load.stop();
    expect(await first.server.kill("SIGTERM")).toEqual({ code: 0, signal: null });

    disk.readOnly(true);
    const refused = CliProcess.spawn(["serve", "--demo", "--store", `sqlite:${file}`, "--port", "0", "--no-web", ...LOAD_LIMITS]);
    expect((await refused.exited).code).toBe(1);
    expect(refused.stderrText).toContain(`Cannot open the task store ${file} for writing: ${disk.dir}`);
    expect(refused.stderrText).toContain("is on a read-only filesystem");

    disk.readOnly(false);
    const second = await startSqliteServer(file);
    const verdict = await expectNothingLost(load.ledger, second.url);
    expect(verdict.acknowledged).toBeGreaterThan(0);
  });
});
