/**
 * `npm run bench:drain`: a drain with parked tasks (docs/durable-execution.md, Parking). A real
 * `mcp-tasks serve --demo --workers 8` on a SQLite file holds N parked tasks (two thirds approvals
 * waiting for their event, one third naps due after the stop) and R running `sleep` tasks; then
 * SIGTERM. Printed side by side: how long the process took to exit against the running sleeps'
 * length and the grace, how many parked rows the drain rewrote, and — after the next start, the
 * approvals' events emitted and the naps' time come — how long until all N completed.
 * The scenario is test/support/parked-drain.ts, which test/e2e/drain-parked.test.ts runs smaller.
 *
 * Flags: `npm run bench:drain -- --help`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { killAll } from "../test/support/cli-process.js";
import { parkedDrain } from "../test/support/parked-drain.js";
import { exitOnHelp, numberFlag, runBench } from "./support/command-line.js";
import { machine } from "./support/machine.js";

const HELP = `Usage: npm run bench:drain -- [flags]
  --parked N     parked tasks at the SIGTERM (default 1000)
  --running N    sleep tasks running at the SIGTERM (default 8, at most --workers)
  --run-ms N     how long each running sleep lasts (default 3000)
  --grace N      the drain's grace, --drain-timeout (default 30000)
  --nap-lead N   ms from the naps' creation to their time, after the exit (default 20000)
  --workers N    the server's --workers (default 8)
  --help`;

const { values: flags } = parseArgs({
  options: {
    parked: { type: "string", default: "1000" },
    running: { type: "string", default: "8" },
    "run-ms": { type: "string", default: "3000" },
    grace: { type: "string", default: "30000" },
    "nap-lead": { type: "string", default: "20000" },
    workers: { type: "string", default: "8" },
    help: { type: "boolean", default: false },
  },
});
exitOnHelp(HELP, flags.help);
const PARKED = numberFlag(HELP, "parked", flags.parked, { min: 3 });
const WORKERS = numberFlag(HELP, "workers", flags.workers, { min: 1 });
const RUNNING = numberFlag(HELP, "running", flags.running, { min: 0, max: WORKERS });
const RUN_MS = numberFlag(HELP, "run-ms", flags["run-ms"], { min: 0 });
const GRACE_MS = numberFlag(HELP, "grace", flags.grace, { min: 0 });
const NAP_LEAD_MS = numberFlag(HELP, "nap-lead", flags["nap-lead"], { min: 0 });

async function main(): Promise<void> {
  const m = machine();
  console.log(`bench:drain on ${m.cores} cores (${m.model}), ${m.os}, node ${m.node}, load avg ${m.load}`);
  console.log(`${PARKED} parked, ${RUNNING} running sleeps of ${RUN_MS} ms, grace ${GRACE_MS} ms, --workers ${WORKERS}\n`);
  const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-bench-drain-"));
  try {
    const r = await parkedDrain({
      dir,
      parked: PARKED,
      running: RUNNING,
      runMs: RUN_MS,
      graceMs: GRACE_MS,
      napLeadMs: NAP_LEAD_MS,
      workers: WORKERS,
    });
    const rows: Array<[string, string]> = [
      ["parked tasks created and parked", `${r.parkedBefore} in ${r.creationMs} ms`],
      [
        "SIGTERM → exit",
        `${r.exitMs} ms (running sleeps ${RUN_MS} ms, grace ${GRACE_MS} ms; ${(r.exitMs / GRACE_MS).toFixed(2)}× the grace)`,
      ],
      ["exit", JSON.stringify(r.exit)],
      ["handlers the drain waited for", `${String(r.drainingRunning)} (completed: ${r.runningCompleted})`],
      ["tasks handed back", String(r.handedBack.length)],
      ["parked rows rewritten by the drain", `${r.parkedRewritten} of ${r.parkedBefore} (still parked: ${r.parkedAfter})`],
      ["naps due after the exit by", `${r.napsDueAfterExitMs} ms`],
      ["next start: approvals woken by their events", String(r.woken)],
      [
        "next start: all parked tasks completed",
        `${r.completedAfter} of ${r.parkedBefore} in ${r.resumedMs} ms (naps included, due ${Math.max(0, r.napsDueAfterExitMs)} ms after the exit)`,
      ],
    ];
    const width = Math.max(...rows.map(([label]) => label.length));
    for (const [label, value] of rows) console.log(`  ${label.padEnd(width)}  ${value}`);
    const ok = r.parkedRewritten === 0 && r.handedBack.length === 0 && r.exitMs < GRACE_MS && r.completedAfter === r.parkedBefore;
    console.log(`\n  goal (exit within the running ones' grace, parked untouched, all resumed): ${ok ? "met" : "NOT met"}`);
  } finally {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main, "bench:drain");
