/**
 * Reliability, the short soak: 20 s of steady load on SQLite with the server's
 * RSS sampled every 5 s (after a warm-up, so the first sample is not the empty process). Every
 * acknowledged task ends right, and RSS stays under a bound. Flatness (the second half's peak
 * against the first's) needs minutes to mean anything — RSS swings by tens of MiB between
 * collections — so it is judged by the 30-minute soak of `npm run bench:reliability`, which fails
 * when it is not flat; here it is printed only.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LoadGenerator } from "../support/reliability/load-generator.js";
import { describeRss, mib, RssSampler } from "../support/reliability/rss-sampler.js";
import { expectNothingLost, scratchDirPerTest, until } from "../support/reliability/scenario.js";
import { startSqliteServer } from "../support/reliability/sqlite-server.js";

const scratch = scratchDirPerTest();

/** The RSS the short soak's server must stay under (see the assertion). */
const RSS_BOUND = 400 * 2 ** 20;

describe("reliability: a short soak on SQLite", { timeout: 120_000 }, () => {
  it("ends every acknowledged task right after 20 s of steady load, with RSS sampled every 5 s and under a bound", async () => {
    const { server, url } = await startSqliteServer(join(scratch(), "t.db"));
    const load = new LoadGenerator({ url, concurrency: 4, pauseMs: 10 }).start();
    await until(3_000); // warm-up: compiled code, caches and pools in place
    const rss = new RssSampler(server.pid, 5_000).start();
    await until(20_000);
    const summary = rss.stop();
    await load.stop();

    expect(summary.samples.length).toBeGreaterThanOrEqual(5);
    console.log(`soak: ${describeRss(summary, 5_000)}`);
    // Measured under twice this load for 25 minutes (docs/reliability.md): RSS swings within
    // 160–265 MiB and does not climb. 400 MiB leaves room for a collection that is late on a
    // loaded machine, and is crossed by a retention of ~10 KiB per request over these 20 s.
    expect(summary.max, `max RSS ${mib(summary.max)}`).toBeLessThan(RSS_BOUND);
    const verdict = await expectNothingLost(load.ledger, url);
    expect(verdict.acknowledged).toBeGreaterThan(0);
  });
});
