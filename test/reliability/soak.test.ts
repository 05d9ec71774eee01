/**
 * Reliability (issue 14, item 6), the short soak: 20 s of steady load on SQLite with the server's
 * RSS sampled every 10 s (after a warm-up, so the first sample is not the empty process). Memory
 * stays flat — the last sample within 25 % of the first — and every acknowledged task ends right.
 * The 30-minute soak is `npm run bench:reliability`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { killAll } from "../support/cli-process.js";
import { LoadGenerator } from "../support/reliability/load-generator.js";
import { RawSession } from "../support/reliability/raw-session.js";
import { RssSampler } from "../support/reliability/rss-sampler.js";
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

describe("reliability: a short soak on SQLite", { timeout: 120_000 }, () => {
  it("keeps RSS flat over 20 s of steady load and ends every acknowledged task right", async () => {
    const { server, url } = await startSqliteServer(join(dir, "t.db"));
    const load = new LoadGenerator({ url, concurrency: 4, pauseMs: 10 }).start();
    await until(3_000); // warm-up: compiled code, caches and pools in place
    const rss = new RssSampler(server.pid, 10_000).start();
    await until(20_000);
    const summary = rss.stop();
    await load.stop();

    expect(summary.samples.length).toBeGreaterThanOrEqual(3);
    expect(summary.flat, `RSS samples ${summary.samples.join(", ")}`).toBe(true);
    const session = await RawSession.open(url);
    const verdict = await load.ledger.judge(session, 30_000);
    await session.close();
    expect(verdict.acknowledged).toBeGreaterThan(0);
    expect(verdict.examples).toEqual([]);
    expect({ lost: verdict.lost, stuck: verdict.stuck, wrong: verdict.wrong }).toEqual({ lost: 0, stuck: 0, wrong: 0 });
  });
});
