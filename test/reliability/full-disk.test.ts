/**
 * Reliability: the disk under the SQLite file fills up under load. Requests
 * that need to write are refused with a JSON-RPC error whose message names the condition, the
 * log says what happened, the process keeps running, and once space is back it serves again;
 * no acknowledged task is lost or left stuck.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LoadGenerator } from "../support/reliability/load-generator.js";
import { RawSession, RpcAnswerError } from "../support/reliability/raw-session.js";
import { mountSmallDisk, type SmallDisk } from "../support/reliability/small-disk.js";
import { expectNothingLost, scratchDirPerTest, until } from "../support/reliability/scenario.js";
import { startSqliteServer } from "../support/reliability/sqlite-server.js";

let disk: SmallDisk | undefined;
const scratch = scratchDirPerTest(() => {
  disk?.unmount();
  disk = undefined;
});

describe("reliability: a full disk under the SQLite file", { timeout: 120_000 }, () => {
  it("refuses writes with a clear error while the disk is full, keeps running, serves again once space is back, and loses nothing acknowledged", async () => {
    disk = mountSmallDisk(scratch(), "16M");
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

    await expectNothingLost(load.ledger, url);
  });

  it("answers every request while the disk is full: a plain call gets its result, sent without an SSE id since it cannot be stored for resumption, and a task creation the disk-full error", async () => {
    disk = mountSmallDisk(scratch(), "16M");
    const { server, url } = await startSqliteServer(join(disk.dir, "t.db"));
    const session = await RawSession.open(url);
    disk.fill();

    const texts: string[] = [];
    for (let i = 0; i < 10; i++) {
      // Bounded: an answer that never comes fails here, not at the suite's timeout.
      const result = await session.request("tools/call", { name: "echo", arguments: { text: `echo ${i}` } }, AbortSignal.timeout(10_000));
      texts.push(String((result["content"] as { text?: string }[])[0]?.text));
    }
    expect(texts).toEqual(Array.from({ length: 10 }, (_, i) => `echo ${i}`));

    const creation = await session
      .request("tools/call", { name: "sleep", arguments: { ms: 10 }, task: { ttl: 60_000 } }, AbortSignal.timeout(10_000))
      .catch((error: unknown) => error);
    expect(creation).toBeInstanceOf(RpcAnswerError);
    expect((creation as RpcAnswerError).error).toMatchObject({
      code: -32603,
      message: "The task store's disk is full: nothing was written; retry once space is freed",
    });
    expect(server.child.exitCode).toBeNull();
  });
});
