/** The runtime's one periodic-upkeep helper (sweeper, lease reaper, worker pool), on real timers. */
import { execFile } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/logger.js";
import { IntervalLoop, type IntervalLoopOptions } from "../../src/runtime/upkeep/interval-loop.js";
import { captureLogger, deferred } from "../support/conformance.js";

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));
const loops: IntervalLoop[] = [];

function loop(options: Partial<IntervalLoopOptions> & Pick<IntervalLoopOptions, "run" | "intervalMs">): IntervalLoop {
  const created = new IntervalLoop({ logger: silentLogger, failure: "pass failed", ...options });
  loops.push(created);
  return created;
}

afterEach(() => {
  for (const started of loops.splice(0)) started.stop();
});

describe("IntervalLoop", () => {
  it("runs a pass on every interval once started", async () => {
    let passes = 0;
    loop({ run: async () => void passes++, intervalMs: 10 }).start();
    await sleep(120);
    expect(passes).toBeGreaterThanOrEqual(3);
  });

  it("does not overlap a slow pass: ticks that find it running join it", async () => {
    let active = 0;
    let mostAtOnce = 0;
    let passes = 0;
    loop({
      run: async () => {
        passes++;
        mostAtOnce = Math.max(mostAtOnce, ++active);
        await sleep(100);
        active--;
      },
      intervalMs: 10,
    }).start();
    await sleep(250);
    expect(mostAtOnce).toBe(1);
    // About 25 ticks fell in those 250 ms; only the ones that found no pass running started one.
    expect(passes).toBeGreaterThanOrEqual(1);
    expect(passes).toBeLessThanOrEqual(3);
  });

  it("runOnce() during a pass returns that pass instead of starting another", async () => {
    const gate = deferred();
    let passes = 0;
    const upkeep = loop({
      run: async () => {
        passes++;
        await gate.promise;
      },
      intervalMs: 60_000,
    });
    const first = upkeep.runOnce();
    const second = upkeep.runOnce();
    expect(second).toBe(first);
    gate.resolve();
    await first;
    expect(passes).toBe(1);
    await upkeep.runOnce();
    expect(passes).toBe(2);
  });

  it("starts no pass after stop()", async () => {
    let passes = 0;
    const upkeep = loop({ run: async () => void passes++, intervalMs: 10 });
    upkeep.start();
    await sleep(50);
    upkeep.stop();
    const atStop = passes;
    await sleep(80);
    expect(atStop).toBeGreaterThan(0);
    expect(passes).toBe(atStop);
  });

  it("logs a pass that throws and runs the next one, and runOnce() does not reject", async () => {
    const logger = captureLogger();
    let passes = 0;
    const upkeep = loop({
      run: async () => {
        passes++;
        throw new Error("store unavailable");
      },
      intervalMs: 10,
      logger,
      failure: "sweep failed; will retry on the next interval",
    });
    await expect(upkeep.runOnce()).resolves.toBeUndefined();
    upkeep.start();
    await logger.until(() => passes >= 3);
    expect(
      logger.entries.filter((e) => e.level === "error" && e.msg === "sweep failed; will retry on the next interval").length,
    ).toBeGreaterThanOrEqual(3);
    expect((logger.entries[0]!.obj["err"] as Error).message).toBe("store unavailable");
  });

  it("does not keep the process alive: a started loop with nothing else to do lets node exit", async () => {
    const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
    const module = pathToFileURL(resolve(root, "src/runtime/upkeep/interval-loop.ts")).href;
    const script = `
      const { IntervalLoop } = await import(${JSON.stringify(module)});
      new IntervalLoop({ run: async () => {}, intervalMs: 60_000, logger: console, failure: "x" }).start();
    `;
    // Were the timer ref'd, node would wait a minute for the first tick: the 15 s timeout kills it.
    const run = promisify(execFile)(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: root,
      timeout: 15_000,
    });
    await expect(run).resolves.toMatchObject({ stderr: "" });
  }, 20_000);
});
