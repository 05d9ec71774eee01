/**
 * SIGTERM with many parked tasks and a few running ones, on real `mcp-tasks serve --demo --workers
 * 8` processes and a SQLite file (docs/durable-execution.md, Parking): the process exits as soon as
 * its running handlers end — well within their grace — and leaves every parked task as it was
 * (row, history and waits unchanged: no "handed back" churn); the next start resumes them all,
 * approvals by their events and naps when their time comes. The goal at full size (1,000
 * parked, 8 running); `npm run bench:drain` (bench/drain.ts) prints the same run's figures.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { killAll } from "../support/cli-process.js";
import { parkedDrain } from "../support/parked-drain.js";

const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-drain-parked-"));
afterEach(async () => {
  await killAll();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PARKED = 1000;
const RUNNING = 8;
const RUN_MS = 2000;
const GRACE_MS = 30_000;

describe("SIGTERM with parked tasks", () => {
  it(
    `${PARKED} parked and ${RUNNING} running: exits once the running ones end, the parked untouched; the next start resumes them all`,
    { timeout: 120_000 },
    async () => {
      const report = await parkedDrain({ dir, parked: PARKED, running: RUNNING, runMs: RUN_MS, graceMs: GRACE_MS, napLeadMs: 15_000 });
      // The drain waited for the 8 running handlers only, which completed; nothing was handed back.
      expect(report.drainingRunning).toBe(RUNNING);
      expect(report.runningCompleted).toBe(RUNNING);
      expect(report.handedBack).toEqual([]);
      expect(report.exit).toEqual({ code: 0, signal: null });
      expect(report.exitMs).toBeLessThan(RUN_MS + 5_000);
      // The parked tasks: all still parked, not one row, history entry or wait rewritten.
      expect(report.parkedBefore).toBe(PARKED);
      expect(report.parkedAfter).toBe(PARKED);
      expect(report.parkedRewritten).toBe(0);
      // The naps were still waiting when the process exited; the next start fired them.
      expect(report.napsDueAfterExitMs).toBeGreaterThan(0);
      expect(report.woken).toBe(PARKED - Math.floor(PARKED / 3));
      expect(report.completedAfter).toBe(PARKED);
    },
  );
});
