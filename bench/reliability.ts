/**
 * `npm run bench:reliability`: the long reliability scenarios, in real
 * processes on this machine, each under steady concurrent load of task-augmented `tools/call`s
 * (`sleep`, `steps`, and plain `echo` calls) from a raw-HTTP load generator in this process
 * (test/support/reliability/). The fast ones are tests under test/reliability/.
 *
 *   sqlite-kills   `serve --demo` on a SQLite file, kill -9'd `--kills` times in a row under load,
 *                  restarted after each kill.
 *   cluster-kills  the cluster (2 fronts, 2 workers, PostgreSQL): kill -9 of a worker, then of a
 *                  front, each replaced, under load spread over the fronts.
 *   pg-restart     the cluster on a PostgreSQL of its own (initdb + pg_ctl), restarted mid-load.
 *   soak           `--minutes` of steady load on SQLite after a 1-minute warm-up, the server's RSS
 *                  sampled every 10 s; flat when the second half's peak is within 10 % of the
 *                  first half's (test/support/reliability/rss-sampler.ts), else the bench exits 1.
 *
 * After each scenario the load stops and every acknowledged task (its CreateTaskResult reached
 * the client) is looked up until all are terminal or the settle time passed, then counted:
 * lost = unknown to the server, stuck = not terminal, wrong = a result other than its arguments
 * imply. A `sleep` (no recovery) failed because its process died is terminal and says so: it
 * counts under "failed, said why", not as lost.
 *
 * Flags: `npm run bench:reliability -- --help`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { killAll } from "../test/support/cli-process.js";
import { Cluster } from "../test/support/cluster.js";
import { startPrivatePostgres } from "../test/support/private-postgres.js";
import { LoadGenerator } from "../test/support/reliability/load-generator.js";
import { RawSession } from "../test/support/reliability/raw-session.js";
import { describeRss, MIN_SAMPLES_TO_JUDGE, RssSampler } from "../test/support/reliability/rss-sampler.js";
import { LOAD_LIMITS, startSqliteServer } from "../test/support/reliability/sqlite-server.js";
import { VERDICT_HEADER, verdictRow, type Verdict } from "../test/support/reliability/task-ledger.js";
import { exitOnHelp, numberFlag, runBench } from "./support/command-line.js";
import { machine } from "./support/machine.js";

const SCENARIOS = ["sqlite-kills", "cluster-kills", "pg-restart", "soak"] as const;
type Scenario = (typeof SCENARIOS)[number];

const HELP = `Usage: npm run bench:reliability -- [flags]
  --only A,B         scenarios to run (default all): ${SCENARIOS.join(", ")}
  --kills N          kill -9s of the SQLite server in a row (default 3)
  --load-seconds S   seconds of load before each kill or restart, and after the last (default 5)
  --concurrency N    load loops sending at once (default 8)
  --minutes M        soak duration (default 30; fractions allowed)
  --settle S         seconds to wait for every acknowledged task to end (default 60)
  --pg URL           PostgreSQL for cluster-kills (default $MCP_TASKS_BENCH_PG or postgres://postgres@127.0.0.1:5432/test)`;

const { values: flags } = parseArgs({
  options: {
    only: { type: "string", default: SCENARIOS.join(",") },
    kills: { type: "string", default: "3" },
    "load-seconds": { type: "string", default: "5" },
    concurrency: { type: "string", default: "8" },
    minutes: { type: "string", default: "30" },
    settle: { type: "string", default: "60" },
    pg: { type: "string", default: process.env["MCP_TASKS_BENCH_PG"] ?? "postgres://postgres@127.0.0.1:5432/test" },
    help: { type: "boolean", default: false },
  },
});
exitOnHelp(HELP, flags.help);
const kills = numberFlag(HELP, "kills", flags.kills, { min: 1, max: 100 });
const loadMs = numberFlag(HELP, "load-seconds", flags["load-seconds"], { min: 1, max: 3600 }) * 1000;
const concurrency = numberFlag(HELP, "concurrency", flags.concurrency, { min: 1, max: 90 });
const soakMs = numberFlag(HELP, "minutes", flags.minutes, { min: 0.1, max: 24 * 60, whole: false }) * 60_000;
const settleMs = numberFlag(HELP, "settle", flags.settle, { min: 1, max: 3600 }) * 1000;
const only = new Set(flags.only.split(",").map((s) => s.trim()));
for (const name of only) {
  if (!(SCENARIOS as readonly string[]).includes(name)) {
    console.error(`--only: unknown scenario ${name}\n\n${HELP}`);
    process.exit(2);
  }
}

const until = (ms: number) => new Promise((r) => setTimeout(r, ms));

const RSS_EVERY_MS = 10_000;
const SOAK_WARMUP_MS = 60_000;
/** What makes the bench exit 1 once it printed everything. */
const failures: string[] = [];

interface Outcome {
  verdict: Verdict;
  load: LoadGenerator;
  note: string;
}

async function judge(load: LoadGenerator, url: string): Promise<Verdict> {
  const session = await RawSession.open(url);
  try {
    return await load.ledger.judge(session, settleMs);
  } finally {
    await session.close();
  }
}

async function sqliteKills(): Promise<Outcome> {
  const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-bench-reliability-"));
  try {
    const file = join(dir, "t.db");
    let current = await startSqliteServer(file);
    const load = new LoadGenerator({ url: current.url, concurrency }).start();
    for (let i = 0; i < kills; i++) {
      await until(loadMs);
      await current.server.kill("SIGKILL");
      current = await startSqliteServer(file);
      load.retarget(current.url);
    }
    await until(loadMs);
    await load.stop();
    return { verdict: await judge(load, current.url), load, note: `${kills} × kill -9, restart after each` };
  } finally {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The fronts (which admit tasks) get the load's quotas; `info` logs (a worker says when it started). */
function clusterOptions(pgUrl: string, workers: number) {
  return { fronts: 2, workers, pgUrl, leaseMs: 3_000, logLevel: "info", frontArgs: LOAD_LIMITS, startTimeoutMs: 90_000 };
}

async function clusterKills(): Promise<Outcome> {
  const cluster = await Cluster.start(clusterOptions(flags.pg, 2));
  try {
    const load = new LoadGenerator({ url: [...cluster.urls], concurrency }).start();
    await until(loadMs);
    await cluster.workers[0]?.kill("SIGKILL");
    await cluster.startWorker();
    await until(loadMs);
    await cluster.fronts[0]?.kill("SIGKILL");
    load.retarget([cluster.urls[1] as string]);
    await cluster.startFront();
    const live = [cluster.urls[1] as string, cluster.urls[2] as string];
    load.retarget(live);
    await until(loadMs);
    await load.stop();
    return { verdict: await judge(load, live[0] as string), load, note: "kill -9 of a worker, then of a front (lease 3 s), each replaced" };
  } finally {
    await cluster.stop();
  }
}

async function pgRestart(): Promise<Outcome> {
  const server = await startPrivatePostgres();
  try {
    const cluster = await Cluster.start(clusterOptions(server.url, 1));
    try {
      const load = new LoadGenerator({ url: [...cluster.urls], concurrency }).start();
      await until(loadMs);
      await server.restart();
      await until(loadMs);
      await load.stop();
      return {
        verdict: await judge(load, cluster.urls[0] as string),
        load,
        note: "pg_ctl stop -m fast + start mid-load (2 fronts, 1 worker)",
      };
    } finally {
      await cluster.stop();
    }
  } finally {
    await server.stop();
  }
}

async function soak(): Promise<Outcome> {
  const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-bench-reliability-"));
  try {
    const { server, url } = await startSqliteServer(join(dir, "t.db"));
    const load = new LoadGenerator({ url, concurrency, pauseMs: 10 }).start();
    // Warm-up: for its first minute or so the server's memory outside the V8 heap grows to where
    // it stays (compiled code, SQLite's page cache, pools); sampled from the start, that growth
    // would read as a climb in a short soak.
    await until(SOAK_WARMUP_MS);
    const rss = new RssSampler(server.pid, RSS_EVERY_MS).start();
    await until(soakMs);
    const summary = rss.stop();
    await load.stop();
    // A soak long enough to judge that is not flat fails the bench (exit 1), after its figures.
    if (!summary.flat && summary.samples.length >= MIN_SAMPLES_TO_JUDGE) failures.push("soak: RSS not flat");
    const note = `${(soakMs / 60_000).toFixed(1)} min, ${describeRss(summary, RSS_EVERY_MS)}; RSS samples (MiB): ${summary.samples.map((b) => Math.round(b / 2 ** 20)).join(" ")}`;
    return { verdict: await judge(load, url), load, note };
  } finally {
    await killAll();
    rmSync(dir, { recursive: true, force: true });
  }
}

const RUN: Record<Scenario, () => Promise<Outcome>> = {
  "sqlite-kills": sqliteKills,
  "cluster-kills": clusterKills,
  "pg-restart": pgRestart,
  soak,
};

async function main(): Promise<void> {
  const m = machine();
  console.log(
    `bench:reliability on ${m.cores} cores (${m.model}), node ${m.node}, load avg ${m.load}; load: ${concurrency} loops, ${loadMs / 1000} s phases, settle ≤ ${settleMs / 1000} s`,
  );
  const rows: string[] = [];
  const notes: string[] = [];
  for (const name of SCENARIOS) {
    if (!only.has(name)) continue;
    const started = Date.now();
    console.log(`running ${name}…`);
    const { verdict, load, note } = await RUN[name]();
    rows.push(verdictRow(name, verdict));
    console.log(rows[rows.length - 1]); // as it comes, in case a later scenario breaks
    const refused = [...load.refusals].map(([m, n]) => `${n}× ${m}`).join("; ") || "none";
    notes.push(
      `${name}: ${note}; ${((Date.now() - started) / 1000).toFixed(0)} s; in doubt (sent, connection died before the answer) ${load.inDoubt}; ` +
        `refused ${refused}; echo calls right ${load.echoes.right}, wrong ${load.echoes.wrong}` +
        (verdict.examples.length > 0 ? `\n  e.g. ${verdict.examples.join("\n  e.g. ")}` : ""),
    );
  }
  console.log(`\n${VERDICT_HEADER}\n${rows.join("\n")}\n`);
  for (const n of notes) console.log(`- ${n}`);
  if (failures.length > 0) throw new Error(failures.join("; "));
}

runBench(main, "bench:reliability");
