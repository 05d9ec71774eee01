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
 *   4. events for E of the approvals, emitted at once through `POST /events` (batches of 1,000,
 *      all sent together): the time until all E tasks completed;
 *   5. T naps all due in the same second, that second chosen far enough ahead for all T to be
 *      parked before it (checked against the store before it comes): how late each timer fired,
 *      each task resumed (its replay claimed) and each completed after that second (p50, p99).
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
  --timers N     naps due in the same second (default 10000): when each timer fired, its task resumed and completed
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
/** Requests in flight at once while creating tasks. */
const CONCURRENCY = 32;
/** Events per `POST /events` (the most one batch takes). */
const EVENT_BATCH = 1000;

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
  const eventsUrl = new URL("/events", server.url);
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
    // All batches at once: each is one store write of up to EVENT_BATCH events.
    const batches = Array.from({ length: Math.ceil(EVENTS / EVENT_BATCH) }, (_, b) =>
      approvals.slice(b * EVENT_BATCH, Math.min(EVENTS, (b + 1) * EVENT_BATCH)),
    );
    await Promise.all(
      batches.map(async (ids) => {
        const events = ids.map((id) => ({ name: `approval/${id}`, payload: { approved: true, by: "bench" } }));
        const response = await fetch(eventsUrl, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ events }),
        });
        const text = await response.text();
        if (response.status !== 200) throw new Error(`emit: HTTP ${response.status} ${text.slice(0, 300)}`);
        const woken = (JSON.parse(text) as { woken: number }).woken;
        if (woken !== ids.length) throw new Error(`emit: ${woken} of ${ids.length} tasks woken`);
      }),
    );
    const emittedMs = performance.now() - emitStarted;
    const eventsMs = await until(() => approved.get()!.n >= EVENTS, 600_000, "the approvals to complete");
    const eventsTotal = emittedMs + eventsMs;
    console.log(
      `  ${batches.length} POST /events of ≤ ${EVENT_BATCH} in ${(emittedMs / 1000).toFixed(2)} s; all ${EVENTS} completed ${(eventsTotal / 1000).toFixed(2)} s after the first was sent`,
    );

    console.log(`5. ${TIMERS} naps due in the same second`);
    // The due second is far enough ahead for every nap to be created and parked first: three times
    // the time step 2 took per task (at least 50 tasks/s), plus 20 s; the store says whether it was.
    const parkRate = Math.max(50, PARKED / parkSeconds);
    const due = Math.ceil((Date.now() + (TIMERS / parkRate) * 3000 + 20_000) / 1000) * 1000;
    const timerFrom = Date.now();
    console.log(`  due at ${new Date(due).toISOString()} (${((due - timerFrom) / 1000).toFixed(0)} s ahead)`);
    const napIds = await createTasks(rpc, "nap", TIMERS, () => `{"until":${due}}`);
    const ours = JSON.stringify(napIds);
    const napsParked = db.prepare<[string], { n: number }>(
      "SELECT count(*) AS n FROM tasks WHERE id IN (SELECT value FROM json_each(?)) AND wait_mode = 'parked'",
    );
    const timersPending = db.prepare<[string, number], { n: number }>(
      "SELECT count(*) AS n FROM task_waits WHERE task_id IN (SELECT value FROM json_each(?)) AND kind = 'timer' AND due_at = ?",
    );
    await until(() => napsParked.get(ours)!.n >= TIMERS || Date.now() >= due - 500, 3_600_000, "the naps to be parked");
    // Read before the due second: every nap unloaded, its timer stored and not fired.
    const parkedBeforeDue = napsParked.get(ours)!.n;
    const timersBeforeDue = timersPending.get(ours, due)!.n;
    const marginMs = due - Date.now();
    console.log(`  ${parkedBeforeDue} parked, ${timersBeforeDue} timers stored, ${(marginMs / 1000).toFixed(1)} s before the due second`);
    const napsDone = db.prepare<[string], { n: number }>(
      "SELECT count(*) AS n FROM tasks WHERE id IN (SELECT value FROM json_each(?)) AND status = 'completed'",
    );
    await until(() => napsDone.get(ours)!.n >= TIMERS, 1_800_000, "the naps to complete");
    // Per nap: when its timer fired (the outcome the store's fireDue kept), when its replay was
    // claimed (started_at), when it completed (updated_at) — each against the due second.
    const lateness = db
      .prepare<[number, number, number, string], { fired: number; resumed: number; completed: number }>(
        `SELECT json_extract(c.value, '$.value.at') - ? AS fired, t.started_at - ? AS resumed, t.updated_at - ? AS completed
         FROM tasks AS t JOIN task_checkpoints AS c ON c.task_id = t.id AND c.name = '$sleep#1'
         WHERE t.id IN (SELECT value FROM json_each(?))`,
      )
      .all(due, due, due, ours);
    const sorted = (key: "fired" | "resumed" | "completed"): number[] => lateness.map((row) => row[key]).sort((a, b) => a - b);
    const fired = sorted("fired");
    const resumed = sorted("resumed");
    const completed = sorted("completed");
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
    row(`  (${batches.length} × POST /events of ≤ ${EVENT_BATCH}: ${(emittedMs / 1000).toFixed(2)} s)`, "", "");
    row(
      `${TIMERS} naps due in one second: parked before it`,
      `${parkedBeforeDue} (${(marginMs / 1000).toFixed(0)} s ahead)`,
      String(TIMERS),
    );
    const p = (values: number[]): string => `${percentile(values, 50).toFixed(0)} / ${percentile(values, 99).toFixed(0)} ms`;
    row("  task completed, lateness p50 / p99", p(completed), "p99 ≤ 1000 ms");
    row("  (timer fired / task resumed, p50 / p99)", `${p(fired)}; ${p(resumed)}`, "");
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main, "bench:waits");
