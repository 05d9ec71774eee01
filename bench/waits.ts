/**
 * `npm run bench:waits`: what waiting costs the process users run. A real `mcp-tasks serve --demo
 * --workers 8` on a SQLite file (dist/ when built, else the sources through tsx) is given, side by
 * side in one run:
 *
 *   1. a stream of `sleep {"ms":50}` tasks with nothing parked: its rate;
 *   2. N parked tasks — a third unanswered questions (`ask`), a third hour-long naps (`nap`), a
 *      third approvals waiting for their event (`approve`) — then the memory they cost (after two
 *      full collections) and the handler slots they hold (tasks started, not finished, not waiting);
 *   3. the same stream of sleeps beside them: its rate, and the ratio to (1);
 *   4. events for E of the approvals, emitted at once through `POST /events/{name}`: the time until
 *      all E tasks completed;
 *   5. T naps all due in the same second: how late each completed after its time (p50, p99).
 *
 * Tasks are created and events emitted over HTTP as a requestor would (2026-07-28 requests, no
 * session); completions are counted by reading the SQLite file (read-only, WAL), which costs the
 * server nothing.
 *
 * Flags: `npm run bench:waits -- --help`.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { exitOnHelp, numberFlag, runBench } from "./support/command-line.js";
import { GcReadableProcess } from "./support/gc-readable-process.js";
import { machine } from "./support/machine.js";
import { NO_CALLER_LIMITS } from "./support/no-caller-limits.js";
import { RawRpc, taskIdIn } from "./support/raw-rpc.js";
import { percentile } from "./support/stats.js";

const HELP = `Usage: npm run bench:waits -- [flags]
  --parked N     tasks parked beside the stream (default 100000; a multiple of 3 is used)
  --stream N     sleep {"ms":50} tasks per stream measurement (default 800)
  --events N     approvals woken by events at once (default 10000, at most parked/3)
  --timers N     naps due in the same second (default 10000): when each timer fired, and when its task completed
  --workers N    the server's --workers (default 8)
  --sources      run the server from the sources (tsx) even when dist/ is built
  --help`;

const { values: flags } = parseArgs({
  options: {
    parked: { type: "string", default: "100000" },
    stream: { type: "string", default: "800" },
    events: { type: "string", default: "10000" },
    timers: { type: "string", default: "10000" },
    workers: { type: "string", default: "8" },
    sources: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});
exitOnHelp(HELP, flags.help);
const PARKED = Math.floor(numberFlag(HELP, "parked", flags.parked, { min: 3, max: 1_000_000 }) / 3) * 3;
const STREAM = numberFlag(HELP, "stream", flags.stream, { min: 8, max: 100_000 });
const EVENTS = Math.min(numberFlag(HELP, "events", flags.events, { min: 1, max: 1_000_000 }), PARKED / 3);
const TIMERS = numberFlag(HELP, "timers", flags.timers, { min: 1, max: 1_000_000 });
const WORKERS = numberFlag(HELP, "workers", flags.workers, { min: 1, max: 1024 });

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const V2026 = "2026-07-28";
const TTL_MS = 12 * 3_600_000;
const META = `"_meta":{"io.modelcontextprotocol/protocolVersion":"${V2026}","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`;
/** Requests in flight at once while creating tasks or emitting events. */
const CONCURRENCY = 32;

/** `mcp-tasks serve --demo --workers N` on the SQLite file, from dist/ when built (else the sources through tsx). */
function startServer(file: string): Promise<GcReadableProcess> {
  const fromDist = !flags.sources && existsSync(join(ROOT, "dist", "cli", "main.js"));
  const bin = fromDist ? ["bin/mcp-tasks.js"] : ["--import", "tsx", "src/cli/main.ts"];
  return GcReadableProcess.start([
    ...bin,
    "serve",
    "--demo",
    "--port",
    "0",
    "--workers",
    String(WORKERS),
    "--store",
    `sqlite:${file}`,
    ...NO_CALLER_LIMITS,
  ]);
}

/** Runs `count` jobs, at most CONCURRENCY at once. */
async function pooled(count: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, count) }, async () => {
      while (next < count) await job(next++);
    }),
  );
}

let rpcId = 0;

/** Creates `count` tasks of `tool` with the arguments `args(i)` (JSON text); returns their ids. */
async function createTasks(rpc: RawRpc, tool: string, count: number, args: (i: number) => string): Promise<string[]> {
  const ids: string[] = new Array<string>(count);
  await pooled(count, async (i) => {
    const body = `{"jsonrpc":"2.0","id":${++rpcId},"method":"tools/call","params":{"name":"${tool}","arguments":${args(i)},"task":{"ttl":${TTL_MS}},${META}}}`;
    const response = await rpc.post(body, { "mcp-protocol-version": V2026, "mcp-method": "tools/call", "mcp-name": tool });
    if (response.status !== 200) throw new Error(`creating ${tool}: HTTP ${response.status} ${response.text.slice(0, 300)}`);
    ids[i] = taskIdIn(response.text);
  });
  return ids;
}

/** Polls `read` every 20 ms until it is true; returns the ms it took. */
async function until(read: () => boolean, timeoutMs: number, what: string): Promise<number> {
  const started = performance.now();
  while (!read()) {
    if (performance.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return performance.now() - started;
}

/** Tasks per second of a stream of `sleep {"ms":50}`, created and run to their end. */
async function streamRate(rpc: RawRpc, db: Database.Database, label: string): Promise<number> {
  const done = db.prepare<[], { n: number }>("SELECT count(*) AS n FROM tasks WHERE name = 'sleep' AND status = 'completed'");
  const before = done.get()!.n;
  const started = performance.now();
  await createTasks(rpc, "sleep", STREAM, () => `{"ms":50}`);
  await until(() => done.get()!.n - before >= STREAM, 600_000, `${label}: the sleeps to complete`);
  const rate = STREAM / ((performance.now() - started) / 1000);
  console.log(`  ${label}: ${STREAM} sleeps of 50 ms in ${((STREAM / rate) * 1000).toFixed(0)} ms → ${rate.toFixed(1)} tasks/s`);
  return rate;
}

const mb = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);

async function main(): Promise<void> {
  const m = machine();
  console.log(`bench:waits on ${m.cores} cores (${m.model}), ${m.os}, node ${m.node}, load avg ${m.load}`);
  console.log(
    `${PARKED} parked tasks, streams of ${STREAM} sleeps, ${EVENTS} events at once, ${TIMERS} timers due together; --workers ${WORKERS}\n`,
  );
  const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-bench-waits-"));
  const file = join(dir, "bench.db");
  const server = await startServer(file);
  const rpc = new RawRpc(server.url, CONCURRENCY);
  const eventsUrl = new URL("/events/", server.url);
  try {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    console.log("1. nothing parked");
    const alone = await streamRate(rpc, db, "stream");
    // The idle baseline is a server that has served: code compiled, caches and pools warm.
    const idle = await server.memory();

    console.log(`2. parking ${PARKED} tasks (ask, nap 1 h, approve)`);
    const parkedNow = db.prepare<[], { n: number }>("SELECT count(*) AS n FROM tasks WHERE wait_mode = 'parked'");
    const holding = db.prepare<[], { n: number }>(
      "SELECT count(*) AS n FROM tasks WHERE started_at IS NOT NULL AND status IN ('working', 'input_required') AND wait_mode IS NULL",
    );
    const third = PARKED / 3;
    const parkStarted = performance.now();
    await createTasks(rpc, "ask", third, (i) => `{"question":"q${i}"}`);
    await createTasks(rpc, "nap", third, () => `{"ms":3600000}`);
    const approvals = await createTasks(rpc, "approve", third, (i) => `{"action":"a${i}"}`);
    await until(() => parkedNow.get()!.n >= PARKED, 3_600_000, "every task to be parked");
    const parkSeconds = (performance.now() - parkStarted) / 1000;
    console.log(`  created and parked in ${parkSeconds.toFixed(1)} s (${(PARKED / parkSeconds).toFixed(0)} tasks/s)`);
    const withParked = await server.memory();
    const slots = holding.get()!.n;
    const rssGrowth = withParked.rss - idle.rss;
    const heapGrowth = withParked.heapUsed + withParked.external - idle.heapUsed - idle.external;

    console.log(`3. the stream beside ${PARKED} parked tasks`);
    const beside = await streamRate(rpc, db, "stream");

    console.log(`4. ${EVENTS} events emitted at once`);
    const approved = db.prepare<[], { n: number }>("SELECT count(*) AS n FROM tasks WHERE name = 'approve' AND status = 'completed'");
    const emitStarted = performance.now();
    const emitting = pooled(EVENTS, async (i) => {
      const response = await fetch(new URL(`approval/${approvals[i]}`, eventsUrl), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: `{"approved":true,"by":"bench"}`,
      });
      if (response.status !== 200) throw new Error(`emit: HTTP ${response.status} ${(await response.text()).slice(0, 300)}`);
      await response.arrayBuffer();
    });
    await emitting;
    const emittedMs = performance.now() - emitStarted;
    const eventsMs = await until(() => approved.get()!.n >= EVENTS, 600_000, "the approvals to complete");
    const eventsTotal = emittedMs + eventsMs;

    console.log(`5. ${TIMERS} naps due in the same second`);
    // Due once every nap can have been created and parked, at the rate step 2 parked tasks.
    const parkRate = PARKED / parkSeconds;
    const due = Date.now() + Math.ceil((TIMERS / parkRate) * 1500) + 10_000;
    const timerFrom = Date.now();
    await createTasks(rpc, "nap", TIMERS, () => `{"until":${due}}`);
    const napsParked = db.prepare<[number], { n: number }>(
      "SELECT count(*) AS n FROM tasks WHERE name = 'nap' AND wait_mode = 'parked' AND created_at >= ?",
    );
    await until(() => napsParked.get(timerFrom)!.n >= TIMERS || Date.now() >= due, 3_600_000, "the naps to be parked");
    const parkedBeforeDue = napsParked.get(timerFrom)!.n;
    const napsDone = db.prepare<[number], { n: number }>(
      "SELECT count(*) AS n FROM tasks WHERE name = 'nap' AND status = 'completed' AND created_at >= ?",
    );
    await until(() => napsDone.get(timerFrom)!.n >= TIMERS, 1_800_000, "the naps to complete");
    // When each timer fired: the time its outcome records (the store's fireDue), against its due time.
    const fired = db
      .prepare<[number, number], { late: number }>(
        `SELECT (json_extract(c.value, '$.value.at') - ?) AS late FROM task_checkpoints AS c JOIN tasks AS t ON t.id = c.task_id
         WHERE t.name = 'nap' AND t.created_at >= ? AND c.name = '$sleep#1' ORDER BY late`,
      )
      .all(due, timerFrom)
      .map((row) => row.late);
    const completed = db
      .prepare<[number, number], { late: number }>(
        "SELECT (updated_at - ?) AS late FROM tasks WHERE name = 'nap' AND status = 'completed' AND created_at >= ? ORDER BY late",
      )
      .all(due, timerFrom)
      .map((row) => row.late);
    db.close();

    console.log("\nfigure                                                      value          goal");
    const row = (label: string, value: string, goal: string): void => console.log(`${label.padEnd(60)}${value.padEnd(15)}${goal}`);
    row("handler slots held by the parked tasks", String(slots), "0");
    row("sleep stream beside them / alone", `${(beside / alone).toFixed(2)}×`, "≥ 0.90×");
    row(`  (tasks/s: alone ${alone.toFixed(1)}, beside ${beside.toFixed(1)})`, "", "");
    row("RSS growth over idle, all parked", `${mb(rssGrowth)} MB`, "≤ 150 MB");
    row(
      "  per parked task: RSS / heap",
      `${(rssGrowth / PARKED / 1024).toFixed(2)} / ${(heapGrowth / PARKED / 1024).toFixed(2)} KB`,
      "≤ 1.5 KB RSS",
    );
    row(`${EVENTS} events emitted at once → all tasks completed`, `${(eventsTotal / 1000).toFixed(2)} s`, "≤ 10 s");
    row(`  (emitting took ${(emittedMs / 1000).toFixed(2)} s)`, "", "");
    row(`${TIMERS} naps due together: parked before their time`, String(parkedBeforeDue), String(TIMERS));
    row(
      "  timer fired, lateness p50 / p99",
      `${percentile(fired, 50).toFixed(0)} / ${percentile(fired, 99).toFixed(0)} ms`,
      "p99 ≤ 1000 ms",
    );
    row("  task completed, lateness p50 / p99", `${percentile(completed, 50).toFixed(0)} / ${percentile(completed, 99).toFixed(0)} ms`, "");
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main, "bench:waits");
