/**
 * `npm run bench:cluster`: cluster mode end to end, in real processes on this machine — two
 * `mcp-tasks serve --workers 0` front nodes and `mcp-tasks worker` processes (`node
 * bin/mcp-tasks.js …`) sharing one PostgreSQL (a fresh schema, dropped at the end), driven over
 * Streamable HTTP on 127.0.0.1 by a lean JSON-RPC client in this process that sends each request
 * to the next front in turn (a balancer without sticky sessions).
 *
 *   1. End-to-end throughput, with 1 worker, then 2, then 1 again (the second stopped with
 *      SIGTERM; the two 1-worker phases are averaged): `lanes` loops, each creating a task
 *      (task-augmented tools/call `sleep {ms: 0}`) and fetching its result (tasks/result, which
 *      blocks until a worker completed it); tasks/s = results fetched per second.
 *   2. Cross-node tasks/result wake-up latency: a `sleep` task created through front A, its
 *      tasks/result sent to front B while it runs, completed by a worker; the latency is the time
 *      from the completion (the task's lastUpdatedAt, written by the worker with the outcome) to
 *      the moment this process holds the tasks/result response. One clock: same machine;
 *      lastUpdatedAt has millisecond resolution, so a sample may read up to 1 ms long.
 *   0. First, the floor: what a bare HTTP round trip and a bare PostgreSQL commit cost on this
 *      machine, since each task needs two of the former and several statements. The round trip
 *      is measured again after each phase, and each phase's CPU is compared with the mean of the
 *      two floors around it: a shared host's speed drifts over a run by more than the ratios the
 *      bench is after.
 *
 * The cluster runs in a database of its own (created on the server of `--pg`, dropped at the end),
 * so the commits counted and the PostgreSQL CPU (of that database's backends) are the bench's
 * alone, whatever else uses the server. Where the bench may not create a database it falls back to
 * a schema in the `--pg` database, counting every commit of that database and every postgres
 * process's CPU. The figures are also drawn as SVG charts (`--charts`, default docs/bench).
 *
 * Runs the compiled CLI (dist/, built first when missing: after a change, `npm run build`).
 * Flags: `npm run bench:cluster -- --help`.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { Agent, createServer, request, type IncomingHttpHeaders } from "node:http";
import { tmpdir } from "node:os";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve as resolvePath } from "node:path";
import { setTimeout as pause } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";
import { stackedBarChartSvg } from "./support/bar-chart.js";
import { exitOnHelp, numberFlag, runBench, type NumberRange } from "./support/command-line.js";
import { machine } from "./support/machine.js";
import { spread } from "./support/stats.js";
import { freePort } from "../test/support/free-port.js";
import { wallNow } from "./support/wall-clock.js";

const HELP = `Usage: npm run bench:cluster -- [flags]
  --pg URL           PostgreSQL (default $MCP_TASKS_BENCH_PG or postgres://postgres@127.0.0.1:5432/test)
  --lanes N          create→result loops running at once (default 64; < 100, the per-requestor cap)
  --concurrency N    worker --concurrency (default 64)
  --duration S       measured seconds per throughput phase, after its warm-up (default 5)
  --warmup S         seconds of load before each phase is measured (default 10): the first phase's
                     processes, and the second phase's new worker, start cold
  --samples N        wake-up latency samples (default 200)
  --sleep-ms MS      sleep of a wake-up sample; its tasks/result is sent while it runs (default 40)
  --log-level L      --log-level of every process (default info, the CLI's: an audit line per event)
  --profile DIR      write a V8 CPU profile of every process (and this one) to DIR (.cpuprofile files)
  --charts DIR       write cluster-cpu.svg and cluster-throughput.svg to DIR (default docs/bench; "" for none)
  --help`;

const { values: flags } = parseArgs({
  options: {
    pg: { type: "string", default: process.env["MCP_TASKS_BENCH_PG"] ?? "postgres://postgres@127.0.0.1:5432/test" },
    lanes: { type: "string", default: "64" },
    concurrency: { type: "string", default: "64" },
    duration: { type: "string", default: "5" },
    warmup: { type: "string", default: "10" },
    samples: { type: "string", default: "200" },
    "sleep-ms": { type: "string", default: "40" },
    "log-level": { type: "string", default: "info" },
    profile: { type: "string" },
    charts: { type: "string", default: "docs/bench" },
    help: { type: "boolean", default: false },
  },
});
exitOnHelp(HELP, flags.help);
const flag = (name: "lanes" | "concurrency" | "duration" | "warmup" | "samples" | "sleep-ms", range: NumberRange): number =>
  numberFlag(HELP, name, flags[name], range);
const PG_URL = flags.pg;
const LANES = flag("lanes", { min: 1, max: 99 });
const CONCURRENCY = flag("concurrency", { min: 1 });
const DURATION_MS = flag("duration", { min: 0.5, max: 60, whole: false }) * 1000;
const SAMPLES = flag("samples", { min: 1, max: 5000 });
const SLEEP_MS = flag("sleep-ms", { min: 5 });
/**
 * Each phase's warm-up: the first phase's processes are fresh (modules loaded and code optimised
 * on first use), and so is the worker the second phase adds; a phase that paid for it would skew
 * the 2 workers ÷ 1 worker ratio.
 */
const WARMUP_MS = flag("warmup", { min: 0, max: 120, whole: false }) * 1000;
const TASK_TTL_MS = 10 * 60_000;
// The installed CLI on dist/, as users run it (built first when missing).
const BIN = fileURLToPath(new URL("../bin/mcp-tasks.js", import.meta.url));
const ROOT = fileURLToPath(new URL("../", import.meta.url));

// ---- processes ------------------------------------------------------------------------------

const children: ChildProcess[] = [];
/** The role of each child, for CPU accounting: "front" or "worker". */
const roles = new Map<ChildProcess, "front" | "worker">();

/** Where each process's log goes: a file, so reading it costs this process (and the figures) nothing. */
const logDir = mkdtempSync(join(tmpdir(), "mcp-tasks-bench-"));
const logs = new Map<string, string>();

/**
 * Spawns `node bin/mcp-tasks-dev.js <args>` with its log (stderr) in a file; its error lines are
 * printed at the end, and its last lines should it exit early.
 */
function startProcess(args: string[], what: string): ChildProcess {
  const profile = flags.profile === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${join(flags.profile, what.replace(/ /g, "-"))}`];
  const logFile = join(logDir, `${what.replace(/ /g, "-")}.log`);
  logs.set(what, logFile);
  const log = openSync(logFile, "a");
  const child = spawn(process.execPath, [...profile, BIN, ...args], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", log],
    env: { ...process.env, PORT: "" },
  });
  closeSync(log);
  children.push(child);
  roles.set(child, what.startsWith("front") ? "front" : "worker");
  child.once("exit", (code, signal) => {
    if (!stopping && !retired.has(child))
      console.error(`${what} exited (${code ?? signal}); its last log lines:\n${logLines(what).slice(-20).join("\n")}`);
  });
  return child;
}

/** Processes the bench stopped on purpose before the end. */
const retired = new Set<ChildProcess>();

/** Stops one process as an operator would (SIGTERM: it drains) and waits for it to exit. */
async function retire(child: ChildProcess): Promise<void> {
  retired.add(child);
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const forced = setTimeout(() => child.kill("SIGKILL"), 30_000);
  await exited;
  clearTimeout(forced);
}

function logLines(what: string): string[] {
  const file = logs.get(what);
  if (file === undefined || !existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "");
}

/** Error lines (pino levels 50 and 60) every process logged: they matter to whoever reads the figures. */
function reportErrors(): void {
  for (const what of logs.keys()) {
    for (const line of logLines(what)
      .filter((l) => /"level":(50|60)/.test(l))
      .slice(0, 20))
      console.error(`[${what}] ${line}`);
  }
}

let stopping = false;

/** Waits for a front's /readyz (it listens only once its LISTEN is up and its store migrated). */
async function ready(url: URL, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(new URL("/readyz", url))).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${what} did not become ready within 30 s`);
    await pause(100);
  }
}

/** Waits until `count` processes LISTEN on the schema's channel (the worker command LISTENs before it reports started). */
async function listening(schema: string, count: number, since: number): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    // A node's event connection, listening or not (a standby running nothing drops its LISTEN).
    while (
      (
        await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE query IN ($1, $2)", [
          `LISTEN mcp_tasks_${schema}`,
          `UNLISTEN mcp_tasks_${schema}`,
        ])
      ).rows[0]!.n < count
    ) {
      if (Date.now() - since > 30_000) throw new Error("a worker did not start within 30 s");
      await pause(100);
    }
  } finally {
    await client.end();
  }
}

async function stopAll(): Promise<void> {
  stopping = true;
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("exit", () => resolve());
          // A profiled process must exit on its own to write its profile (SIGTERM: a clean stop).
          child.kill(flags.profile === undefined ? "SIGKILL" : "SIGTERM");
        }),
    ),
  );
}

// ---- a lean JSON-RPC client over Streamable HTTP ----------------------------------------------

interface RpcResponse {
  id?: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

type Answer = { status: number; headers: IncomingHttpHeaders; text: string };

/**
 * One POST on a kept-alive connection. A request that fails with ECONNRESET on a reused socket
 * (the server closed it as idle just as it was reused: never processed) is sent once more, on a
 * new connection: after a pause in the load every idle socket of the pool may be such a one.
 */
async function post(url: URL, body: string, headers: Record<string, string>): Promise<Answer> {
  try {
    return await postOnce(url, body, headers, agent);
  } catch (error) {
    if ((error as { code?: unknown; reused?: unknown }).code === "ECONNRESET" && (error as { reused?: unknown }).reused) {
      return postOnce(url, body, headers, false);
    }
    throw error;
  }
}

function postOnce(url: URL, body: string, headers: Record<string, string>, via: Agent | false): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        agent: via,
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "content-length": Buffer.byteLength(body),
          ...headers,
        },
      },
      (res) => {
        res.setEncoding("utf8");
        let text = "";
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
        res.on("error", reject);
      },
    );
    req.on("error", (error) => reject(Object.assign(error, { reused: req.reusedSocket })));
    req.end(body);
  });
}

/** The JSON-RPC response with `id` in a JSON body or an SSE stream (the SDK transport answers either). */
function responseOf(text: string, id: number): RpcResponse {
  const trimmed = text.trimStart();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    const parsed = JSON.parse(trimmed) as RpcResponse | RpcResponse[];
    const found = Array.isArray(parsed) ? parsed.find((m) => m.id === id) : parsed;
    if (found) return found;
  } else {
    for (const line of text.split("\n")) {
      if (!line.startsWith("data:")) continue;
      const message = JSON.parse(line.slice(5)) as RpcResponse;
      if (message.id === id && ("result" in message || "error" in message)) return message;
    }
  }
  throw new Error(`no response with id ${id} in: ${text.slice(0, 300)}`);
}

/** One MCP session, every request sent to the next front in turn. */
class Session {
  private seq = 0;
  private turn = 0;
  private constructor(
    private readonly fronts: URL[],
    private readonly headers: Record<string, string>,
  ) {}

  static async open(fronts: URL[]): Promise<Session> {
    const init = JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench-cluster", version: "1.0.0" } },
    });
    const answer = await post(fronts[0]!, init, {});
    const sessionId = answer.headers["mcp-session-id"];
    if (answer.status !== 200 || typeof sessionId !== "string") throw new Error(`initialize failed: ${answer.status} ${answer.text}`);
    const session = new Session(fronts, { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" });
    await post(fronts[1 % fronts.length]!, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), session.headers);
    return session;
  }

  /** Sends to front `node`, or to the next one in turn. Resolves with the result; rejects on an error. */
  async call(method: string, params: Record<string, unknown>, node?: number): Promise<Record<string, unknown>> {
    const id = ++this.seq;
    const front = this.fronts[node ?? this.turn++ % this.fronts.length]!;
    const answer = await post(front, JSON.stringify({ jsonrpc: "2.0", id, method, params }), this.headers);
    const response = responseOf(answer.text, id);
    if (response.error) throw new Error(`${method}: ${response.error.code} ${response.error.message}`);
    return response.result ?? {};
  }
}

// ---- CPU accounting (Linux /proc) ---------------------------------------------------------------

const TICK_MS = 10; // USER_HZ = 100 on Linux

/** utime + stime of a process in ms, or 0 when it cannot be read. */
function cpuOfPid(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

/**
 * The database the cluster runs in: one of its own when the bench could create it (then only its
 * backends' CPU and its commits are counted), else the `--pg` database, shared with whoever else
 * uses it. Set by main() before anything is measured.
 */
let bench: { url: string; ownDatabase: string | null } = { url: PG_URL, ownDatabase: null };

/** A database of the bench's own on the `--pg` server, or null when it may not create one. */
async function createDatabase(): Promise<{ url: string; name: string } | null> {
  const name = `bench_cluster_${randomBytes(4).toString("hex")}`;
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } catch (error) {
    console.error(
      `note: could not create a database of the bench's own (${(error as Error).message}); using the --pg database, whose other clients' commits and every postgres process's CPU count too`,
    );
    return null;
  } finally {
    await client.end();
  }
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), name };
}

async function dropDatabase(name: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/**
 * The postgres processes whose CPU counts: the backends connected to the bench's own database (a
 * backend that connected meanwhile counts from 0; the server's shared background processes — WAL
 * writer, checkpointer — are left out), or, without one, every postgres process on the machine.
 */
async function postgresPids(): Promise<{ pid: number; listening: boolean }[]> {
  if (bench.ownDatabase !== null) {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      // A node's LISTEN connection runs nothing but its LISTEN (or UNLISTEN): that stays its last statement.
      return (
        await client.query<{ pid: number; listening: boolean }>(
          "SELECT pid, query ~ '^(UN)?LISTEN ' AS listening FROM pg_stat_activity WHERE datname = $1",
          [bench.ownDatabase],
        )
      ).rows;
    } finally {
      await client.end();
    }
  }
  try {
    return readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "postgres";
        } catch {
          return false;
        }
      })
      .map((pid) => ({ pid: Number(pid), listening: false }));
  } catch {
    return [];
  }
}

interface CpuSnapshot {
  front: number;
  worker: number;
  /** The part of `worker` spent by workers started after the first (second in the wake order and later: standbys). */
  standby: number;
  postgres: Map<number, number>;
  /** The backends serving the nodes' LISTEN connections (delivering notifications is all they do). */
  listeners: Set<number>;
  bench: number;
}

async function cpuSnapshot(): Promise<CpuSnapshot> {
  const pids = await postgresPids();
  const snapshot: CpuSnapshot = { front: 0, worker: 0, standby: 0, postgres: new Map(), listeners: new Set(), bench: 0 };
  let workers = 0;
  for (const child of children) {
    if (child.pid === undefined) continue;
    const role = roles.get(child) ?? "worker";
    const ms = cpuOfPid(child.pid);
    snapshot[role] += ms;
    if (role === "worker" && workers++ > 0) snapshot.standby += ms;
  }
  for (const { pid, listening } of pids) {
    snapshot.postgres.set(pid, cpuOfPid(pid));
    if (listening) snapshot.listeners.add(pid);
  }
  const own = process.cpuUsage();
  snapshot.bench = (own.user + own.system) / 1000;
  return snapshot;
}

/** CPU ms spent between two snapshots, per role (a backend that started meanwhile counts from 0). */
function cpuSpent(
  from: CpuSnapshot,
  to: CpuSnapshot,
): { front: number; worker: number; standby: number; postgres: number; notifying: number; bench: number } {
  let postgres = 0;
  let notifying = 0;
  for (const [pid, ms] of to.postgres) {
    postgres += ms - (from.postgres.get(pid) ?? 0);
    if (to.listeners.has(pid)) notifying += ms - (from.postgres.get(pid) ?? 0);
  }
  return {
    front: to.front - from.front,
    worker: to.worker - from.worker,
    standby: to.standby - from.standby,
    postgres,
    notifying,
    bench: to.bench - from.bench,
  };
}

/** Two runs of the same phase as one: each figure the mean of both (latencies too, as a summary). */
function meanOf(a: Throughput, b: Throughput): Throughput {
  const mean = (x: number, y: number): number => (x + y) / 2;
  return {
    ...a,
    tasksPerSecond: mean(a.tasksPerSecond, b.tasksPerSecond),
    tasks: a.tasks + b.tasks,
    seconds: a.seconds + b.seconds,
    p50: mean(a.p50, b.p50),
    p95: mean(a.p95, b.p95),
    p99: mean(a.p99, b.p99),
    cpu: {
      front: mean(a.cpu.front, b.cpu.front),
      worker: mean(a.cpu.worker, b.cpu.worker),
      standby: mean(a.cpu.standby, b.cpu.standby),
      postgres: mean(a.cpu.postgres, b.cpu.postgres),
      notifying: mean(a.cpu.notifying, b.cpu.notifying),
      bench: mean(a.cpu.bench, b.cpu.bench),
    },
    commits: mean(a.commits, b.commits),
  };
}

// ---- measurements -----------------------------------------------------------------------------

async function createTask(session: Session, args: Record<string, unknown>, node?: number): Promise<string> {
  const created = await session.call("tools/call", { name: "sleep", arguments: args, task: { ttl: TASK_TTL_MS } }, node);
  const taskId = (created["task"] as { taskId?: unknown } | undefined)?.taskId;
  if (typeof taskId !== "string") throw new Error(`not a CreateTaskResult: ${JSON.stringify(created)}`);
  return taskId;
}

/** Lanes of create → tasks/result for `DURATION_MS` after a warm-up; tasks/s over the measured window. */
interface Throughput {
  tasksPerSecond: number;
  tasks: number;
  seconds: number;
  p50: number;
  p95: number;
  p99: number;
  /** The 1, 5 and 15 minute load averages at the end of the measured window. */
  load: string;
  /** CPU ms per task fetched, per role, over the measured window. */
  cpu: ReturnType<typeof cpuSpent>;
  /** Transactions committed in the database per task fetched (each statement outside BEGIN is one). */
  commits: number;
}

/** Transactions committed in the bench's database so far (pg_stat_database; in a shared one, other clients' count too). */
async function commits(): Promise<number> {
  const client = new pg.Client({ connectionString: bench.url });
  await client.connect();
  try {
    // The statistics are cached per transaction and reported with a delay: clear and wait a little.
    await client.query("SELECT pg_stat_clear_snapshot()");
    const row = await client.query<{ n: string }>("SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = current_database()");
    return Number(row.rows[0]?.n ?? NaN);
  } finally {
    await client.end();
  }
}

/**
 * `VACUUM` of the schema's busiest tables, run at the end of each phase's warm-up (the load keeps
 * running; its cost falls outside the measured window), as a server's autovacuum would have on
 * its own by then: without it (autovacuum off) each phase would pay for the dead rows of the
 * phases before it. Statistics are not the bench's business: the store keeps those of its tasks
 * table itself (src/store/postgres/statistics-upkeep.ts).
 */
async function maintain(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: bench.url });
  await client.connect();
  try {
    for (const table of ["tasks", "task_counts", "task_count_deltas", "task_history"]) await client.query(`VACUUM ${schema}.${table}`);
  } finally {
    await client.end();
  }
}

async function throughput(sessions: Session[], warmupMs: number, schema: string): Promise<Throughput> {
  let measuring = false;
  let stop = false;
  let done = 0;
  const latencies: number[] = [];
  const lane = async (session: Session): Promise<void> => {
    while (!stop) {
      const started = performance.now();
      const taskId = await createTask(session, { ms: 0 });
      const result = await session.call("tasks/result", { taskId });
      const text = (result["content"] as Array<{ text?: string }> | undefined)?.[0]?.text;
      if (text !== "slept 0 ms") throw new Error(`unexpected result: ${JSON.stringify(result)}`);
      if (measuring && !stop) {
        done++;
        latencies.push(performance.now() - started);
      }
    }
  };
  const running = Array.from({ length: LANES }, (_, i) => lane(sessions[i % sessions.length]!));
  const failed = Promise.race(running).then(() => undefined);
  await Promise.race([pause(warmupMs), failed]);
  await Promise.race([maintain(schema), failed]);
  const commitsFrom = await commits();
  measuring = true;
  const from = performance.now();
  const cpuFrom = await cpuSnapshot();
  await Promise.race([pause(DURATION_MS), failed]);
  const seconds = (performance.now() - from) / 1000;
  const counted = done;
  const spent = cpuSpent(cpuFrom, await cpuSnapshot());
  const commitsTo = await commits();
  stop = true;
  measuring = false;
  await Promise.all(running);
  const { p50, p95, p99 } = spread(latencies);
  const perTask = (ms: number): number => ms / Math.max(1, counted);
  return {
    tasksPerSecond: counted / seconds,
    tasks: counted,
    seconds,
    p50,
    p95,
    p99,
    load: machine().load,
    cpu: {
      front: perTask(spent.front),
      worker: perTask(spent.worker),
      standby: perTask(spent.standby),
      postgres: perTask(spent.postgres),
      notifying: perTask(spent.notifying),
      bench: perTask(spent.bench),
    },
    commits: perTask(commitsTo - commitsFrom),
  };
}

/** Sequential samples: created at front 0, waited on at front 1; completion → response. */
async function wakeups(session: Session): Promise<{ samples: number[]; skipped: number }> {
  const samples: number[] = [];
  let skipped = 0;
  for (let i = 0; i < SAMPLES; i++) {
    const taskId = await createTask(session, { ms: SLEEP_MS }, 0);
    const sentAt = Date.now();
    const result = await session.call("tasks/result", { taskId }, 1);
    const received = wallNow();
    if (!Array.isArray(result["content"])) throw new Error(`unexpected result: ${JSON.stringify(result)}`);
    const task = await session.call("tasks/get", { taskId }, 0);
    const completedAt = Date.parse(String(task["lastUpdatedAt"]));
    if (task["status"] !== "completed" || !Number.isFinite(completedAt)) throw new Error(`unexpected task: ${JSON.stringify(task)}`);
    // Only a tasks/result that was really blocked measures a wake-up.
    if (completedAt <= sentAt) skipped++;
    else samples.push(received - completedAt);
  }
  return { samples, skipped };
}

// ---- calibration: what the floor costs on this machine -------------------------------------------

/** The CPU of a bare Node HTTP round trip, in ms: client and server in this process, keep-alive, a small JSON body. */
async function bareRoundTrip(): Promise<number> {
  const rounds = 2000;
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk));
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const url = new URL(`http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/`);
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tasks/get", params: { taskId: "0".repeat(36) } });
  const run = async (n: number): Promise<number> => {
    const cpu = process.cpuUsage();
    let sent = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (sent++ < n) await post(url, body, {});
      }),
    );
    const used = process.cpuUsage(cpu);
    return (used.user + used.system) / 1000 / n;
  };
  // Warm first: measured cold, the round trip also pays for compiling its code, which once made
  // it look three to four times dearer than it is.
  await run(rounds);
  const ms = await run(rounds);
  server.close();
  return ms;
}

/**
 * CPU of the two things every task needs several of, measured here and now: a bare Node HTTP
 * round trip ({@link bareRoundTrip}) and a one-row UPDATE committed on PostgreSQL (the server's
 * CPU, and this process's for the driver).
 */
async function calibrate(): Promise<{ httpMs: number; commitPgMs: number; commitDriverMs: number }> {
  const httpMs = await bareRoundTrip();
  const rounds = 2000;
  const pool = new pg.Pool({ connectionString: bench.url, max: 8 });
  const table = `bench_calibrate_${randomBytes(4).toString("hex")}`;
  try {
    await pool.query(`CREATE TABLE ${table} (id int PRIMARY KEY, v int)`);
    await pool.query(`INSERT INTO ${table} SELECT g, 0 FROM generate_series(1, 64) g`);
    await Promise.all(Array.from({ length: 8 }, () => pool.query("SELECT 1"))); // its backends exist before the snapshot
    const commit = async (n: number): Promise<void> => {
      let done = 0;
      await Promise.all(
        Array.from({ length: 8 }, async (_, lane) => {
          while (done++ < n)
            await pool.query({
              name: "calibrate",
              text: `UPDATE ${table} SET v = v + 1 WHERE id = $1`,
              values: [1 + ((done + lane) % 64)],
            });
        }),
      );
    };
    await commit(rounds); // warm, as the round trip
    const before = await cpuSnapshot();
    const cpu = process.cpuUsage();
    await commit(rounds);
    const used = process.cpuUsage(cpu);
    const spent = cpuSpent(before, await cpuSnapshot());
    return { httpMs, commitPgMs: spent.postgres / rounds, commitDriverMs: (used.user + used.system) / 1000 / rounds };
  } finally {
    await pool.query(`DROP TABLE IF EXISTS ${table}`).catch(() => {});
    await pool.end();
  }
}

// ---- charts -------------------------------------------------------------------------------------

/** CPU ms per task, every component together. */
function cpuPerTask(r: Throughput): number {
  return r.cpu.front + r.cpu.worker + r.cpu.postgres + r.cpu.bench;
}

/** CPU per task per component, and throughput against the ceilings, for 1 and 2 workers (README "Measured"). */
function writeCharts(
  dir: string,
  run: { one: Throughput; two: Throughput; httpOnlyMs: number; ceiling: number; withCommits: number; load: string; cores: number },
): void {
  const target = resolvePath(ROOT, dir);
  mkdirSync(target, { recursive: true });
  const parts = (r: Throughput) => [
    { label: "fronts", value: r.cpu.front },
    { label: "workers", value: r.cpu.worker },
    { label: "PostgreSQL", value: r.cpu.postgres },
    { label: "bench client", value: r.cpu.bench },
  ];
  const cpu = stackedBarChartSvg({
    title: `bench:cluster: CPU per task (load average ${run.load})`,
    yLabel: "ms of CPU per task",
    bars: [
      { label: "1 worker", segments: parts(run.one) },
      { label: "2 workers", segments: parts(run.two) },
    ],
    references: [{ y: run.httpOnlyMs, label: `2 bare HTTP round trips: ${run.httpOnlyMs.toFixed(2)} ms` }],
  });
  const throughput = stackedBarChartSvg({
    title: `bench:cluster: tasks/s end to end (load average ${run.load})`,
    yLabel: "tasks per second",
    // What the CPU per task would allow with both cores to itself: on a shared machine the
    // measured rate is also bounded by what the other processes leave.
    bars: [
      { label: "1 worker", segments: [{ label: "tasks/s", value: run.one.tasksPerSecond }] },
      { label: "2 workers", segments: [{ label: "tasks/s", value: run.two.tasksPerSecond }] },
      { label: "1 w.: cores ÷ CPU", segments: [{ label: "tasks/s", value: (run.cores * 1000) / cpuPerTask(run.one) }] },
      { label: "2 w.: cores ÷ CPU", segments: [{ label: "tasks/s", value: (run.cores * 1000) / cpuPerTask(run.two) }] },
    ],
    references: [
      { y: run.ceiling, label: `ceiling: 2 bare round trips, ${Math.round(run.ceiling)}/s` },
      { y: 0.7 * run.ceiling, label: `target: 0.7 of it, ${Math.round(0.7 * run.ceiling)}/s` },
      { y: run.withCommits, label: `+ 3 single-row commits, ${Math.round(run.withCommits)}/s` },
    ],
    decimals: 0,
  });
  writeFileSync(join(target, "cluster-cpu.svg"), cpu);
  writeFileSync(join(target, "cluster-throughput.svg"), throughput);
  console.log(`charts:  ${join(dir, "cluster-cpu.svg")}, ${join(dir, "cluster-throughput.svg")}`);
}

// ---- main -------------------------------------------------------------------------------------

async function describeMachine(): Promise<string> {
  const here = machine();
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  const version = (await client.query<{ v: string }>("SELECT split_part(version(), ' on ', 1) AS v")).rows[0]?.v ?? "?";
  const autovacuum = (await client.query<{ on: string }>("SELECT current_setting('autovacuum') AS on")).rows[0]?.on ?? "?";
  await client.end();
  return [
    `machine: ${here.cores} × ${here.model}, ${here.ramGiB.toFixed(1)} GiB RAM, ${here.os}`,
    `         node ${here.node}, ${version} on 127.0.0.1, load average ${here.load}`,
    // Without it nothing reclaims dead rows nor analyzes the fresh schema (see maintain() and the
    // store's statistics upkeep, which stand in for it).
    `         autovacuum ${autovacuum}${autovacuum === "off" ? " (dead rows: the bench vacuums after each warm-up; statistics: the store analyzes its tasks table itself)" : ""}`,
  ].join("\n");
}

async function main(): Promise<void> {
  const began = performance.now();
  if (!existsSync(join(ROOT, "dist", "cli", "main.js"))) {
    console.log("building dist/ (npm run build)…");
    execFileSync("npm", ["run", "build", "--silent"], { cwd: ROOT, stdio: "inherit" });
  }
  console.log(await describeMachine());
  const own = await createDatabase();
  if (own !== null) bench = { url: own.url, ownDatabase: own.name };
  try {
    await measure(began);
  } finally {
    if (own !== null) await dropDatabase(own.name);
  }
}

async function measure(began: number): Promise<void> {
  const loadAtStart = machine().load;
  const floor = await calibrate();
  console.log(
    `floor:   a bare HTTP round trip costs ${floor.httpMs.toFixed(2)} ms CPU (client + server); a one-row UPDATE commit ${floor.commitPgMs.toFixed(2)} ms of PostgreSQL CPU + ${floor.commitDriverMs.toFixed(2)} ms in the driver`,
  );
  // What a task costs at the very least: its two HTTP round trips (create, result) — and, stored
  // one commit at a time, three commits (written, claimed by a worker, its outcome written).
  const here = machine();
  const { cores } = here;
  const httpOnlyMs = 2 * floor.httpMs;
  const ceiling = (cores * 1000) / httpOnlyMs;
  const commitsMs = 3 * (floor.commitPgMs + floor.commitDriverMs);
  const withCommitsMs = httpOnlyMs + commitsMs;
  console.log(
    `ceiling: per task, 2 bare round trips = ${httpOnlyMs.toFixed(2)} ms CPU → at most ${Math.round((cores * 1000) / httpOnlyMs)} tasks/s on ${cores} cores doing nothing else; ` +
      `+ 3 single-row commits = ${withCommitsMs.toFixed(2)} ms → ${Math.round((cores * 1000) / withCommitsMs)} tasks/s`,
  );
  // The target is a share of the first figure, which leaves storage out: a durable task that did
  // nothing but its round trips and commits would already stop at this share of it.
  console.log(
    `         (a task doing only its 2 round trips and 3 commits: ${(httpOnlyMs / withCommitsMs).toFixed(2)} of the first ceiling)`,
  );

  const schema = `bench_cluster_${randomBytes(4).toString("hex")}`;
  const store = `${bench.url}${bench.url.includes("?") ? "&" : "?"}schema=${schema}`;
  const common = ["--demo", "--store", store, "--log-level", flags["log-level"]];
  console.log(
    `setup:   2 × serve --workers 0, worker --concurrency ${CONCURRENCY}, --log-level ${flags["log-level"]}; ${LANES} lanes over ${Math.min(LANES, 8)} sessions; ${bench.ownDatabase === null ? "" : `database ${bench.ownDatabase}, `}schema ${schema};\n` +
      `         each phase's warm-up ends with a VACUUM of the schema's busiest tables (as autovacuum would)`,
  );
  console.log("");
  try {
    const front = async (n: number): Promise<URL> => {
      const port = await freePort();
      // --rate-limit off, --max-stored-tasks: the bench is one anonymous caller on 127.0.0.1, far over
      // 100 ops/s and 10,000 stored tasks by design.
      startProcess(
        ["serve", ...common, "--port", String(port), "--workers", "0", "--no-web", "--rate-limit", "off", "--max-stored-tasks", "10000000"],
        `front ${n}`,
      );
      const url = new URL(`http://127.0.0.1:${port}/mcp`);
      await ready(url, `front ${n}`);
      return url;
    };
    const fronts = await Promise.all([front(0), front(1)]);
    const worker = async (n: number): Promise<ChildProcess> => {
      const started = Date.now();
      const child = startProcess(["worker", ...common, "--concurrency", String(CONCURRENCY)], `worker ${n}`);
      // A worker serves no HTTP: it is up once its LISTEN connection shows in pg_stat_activity.
      await listening(schema, n + 2, started);
      return child;
    };
    const sessions = await Promise.all(Array.from({ length: Math.min(LANES, 8) }, () => Session.open(fronts)));

    // 1 worker, 2 workers, then 1 worker again (the second stopped): whatever drifts over the run
    // (the fronts still warming up, the table growing, the machine) falls on both sides of the 2.
    await worker(1);
    // The bare round trip again after each phase, with the cluster idle in between.
    const floors = [floor.httpMs];
    const first = await throughput(sessions, WARMUP_MS, schema);
    floors.push(await bareRoundTrip());
    const second = await worker(2);
    const two = await throughput(sessions, WARMUP_MS, schema);
    floors.push(await bareRoundTrip());
    const wake = await wakeups(sessions[0]!);
    await retire(second);
    const again = await throughput(sessions, WARMUP_MS, schema);
    floors.push(await bareRoundTrip());
    const one = meanOf(first, again);
    // Each phase against the 2 bare round trips measured just before and just after it.
    const around = new Map<Throughput, number>([first, two, again].map((r, i) => [r, floors[i]! + floors[i + 1]!]));
    around.set(one, (around.get(first)! + around.get(again)!) / 2);
    const bare = (r: Throughput): number => around.get(r) ?? httpOnlyMs;

    const cpuTotal = cpuPerTask;
    const row = (label: string, r: Throughput) =>
      [
        `  ${label}  ${r.tasksPerSecond.toFixed(0).padStart(6)} tasks/s = ${(r.tasksPerSecond / ceiling).toFixed(2)} of the ceiling   (${r.tasks} tasks in ${r.seconds.toFixed(1)} s; create→result per task p50 ${r.p50.toFixed(1)} ms, p95 ${r.p95.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms; load average ${r.load})`,
        `             CPU per task: fronts ${r.cpu.front.toFixed(2)} ms, worker${label.includes("2") ? `s ${r.cpu.worker.toFixed(2)} ms (the second, standing by: ${r.cpu.standby.toFixed(3)} ms)` : ` ${r.cpu.worker.toFixed(2)} ms`}, PostgreSQL ${r.cpu.postgres.toFixed(2)} ms (of which its LISTEN connections' ${r.cpu.notifying.toFixed(3)} ms), bench client ${r.cpu.bench.toFixed(2)} ms; ${r.commits.toFixed(2)} PostgreSQL commits per task`,
        `             in all ${cpuTotal(r).toFixed(2)} ms = ${(cpuTotal(r) / bare(r)).toFixed(2)} × the 2 bare round trips of ${bare(r).toFixed(2)} ms around it (target ≤ 2.0), ${(cpuTotal(r) / (bare(r) + commitsMs)).toFixed(2)} × those and 3 single-row commits; at ${r.tasksPerSecond.toFixed(0)} tasks/s that is ${((cpuTotal(r) * r.tasksPerSecond) / 1000).toFixed(2)} of the ${cores} cores`,
      ].join("\n");
    console.log(
      `end-to-end throughput (create → worker completes → tasks/result fetched), target ≥ 0.7 of the ceiling = ${Math.round(0.7 * ceiling)} tasks/s:`,
    );
    console.log(row("1 worker ", first));
    console.log(row("2 workers", two));
    console.log(row("1 worker ", again));
    console.log(`  (the third phase: worker 2 stopped with SIGTERM; "1 worker" below is the mean of the first and the third)`);
    console.log(
      `  (a bare HTTP round trip before the first phase and after each: ${floors.map((ms) => ms.toFixed(2)).join(" / ")} ms of CPU)`,
    );
    console.log(
      bench.ownDatabase === null
        ? `  (CPU from /proc, 10 ms ticks; PostgreSQL CPU and commits count every client of the server, not only this bench's)`
        : `  (CPU from /proc, 10 ms ticks; PostgreSQL: the backends of the bench's database, and its commits, nobody else's)`,
    );
    console.log(
      `  2 workers ÷ 1 worker: ${(two.tasksPerSecond / one.tasksPerSecond).toFixed(2)} × the tasks/s (target ≥ 1.00), ${(two.commits / one.commits).toFixed(2)} × the commits per task (2 workers: ${two.commits.toFixed(2)}, target ≤ 0.80), ${(cpuTotal(two) / cpuTotal(one)).toFixed(2)} × the CPU per task, ${(cpuTotal(two) / bare(two) / (cpuTotal(one) / bare(one))).toFixed(2)} × against the floors around each`,
    );
    console.log("");
    // The figures job systems publish (Hatchet's benchmark table): throughput, latency from
    // creation to result at p50 and p99, and what the database pays per task.
    console.log(`summary (${here.cores} × ${here.model}, PostgreSQL on the same machine):`);
    console.log(
      "  workers  tasks/s  create→result p50  p99       PostgreSQL CPU/task  commits/task  CPU/task ÷ 2 bare round trips  load average",
    );
    for (const [n, r] of [
      [1, first],
      [2, two],
      [1, again],
    ] as const) {
      console.log(
        `  ${String(n).padStart(7)}  ${r.tasksPerSecond.toFixed(0).padStart(7)}  ${`${r.p50.toFixed(1)} ms`.padStart(17)}  ${`${r.p99.toFixed(1)} ms`.padEnd(8)}  ${`${r.cpu.postgres.toFixed(2)} ms`.padStart(19)}  ${r.commits.toFixed(2).padStart(12)}  ${cpuTotal(r) === 0 ? "" : (cpuTotal(r) / bare(r)).toFixed(2).padStart(30)}  ${r.load}`,
      );
    }
    // The paper model of docs/performance.md ("Beyond one machine"), from the 2-worker figures:
    // what one PostgreSQL core carries at 70 % busy, and the front and worker cores that takes.
    const busy = 0.7;
    const perPgCore = (busy * 1000) / two.cpu.postgres;
    console.log(
      `paper model (2 workers' figures, every core 70 % busy): one PostgreSQL core carries 0.7 × 1000 ÷ ${two.cpu.postgres.toFixed(2)} ms = ${perPgCore.toFixed(0)} tasks/s = ${(perPgCore * two.commits).toFixed(0)} commits/s, ` +
        `with ${((perPgCore * two.cpu.front) / (busy * 1000)).toFixed(2)} front cores and ${((perPgCore * two.cpu.worker) / (busy * 1000)).toFixed(2)} worker cores (handlers that do nothing)`,
    );
    console.log("");
    const s = spread(wake.samples);
    console.log(`cross-node tasks/result wake-up (completed by a worker → answered by the other front), target p50 ≤ 15 ms:`);
    console.log(
      `  p50 ${s.p50.toFixed(1)} ms   p95 ${s.p95.toFixed(1)} ms   p99 ${s.p99.toFixed(1)} ms   min ${s.min.toFixed(1)} ms   max ${s.max.toFixed(1)} ms   (${s.n} samples of sleep ${SLEEP_MS} ms${wake.skipped ? `, ${wake.skipped} not blocked and left out` : ""})`,
    );
    console.log("");
    if (flags.charts !== "")
      writeCharts(flags.charts, { one, two, httpOnlyMs, ceiling, withCommits: (cores * 1000) / withCommitsMs, load: loadAtStart, cores });
    console.log(`done in ${((performance.now() - began) / 1000).toFixed(1)} s`);
  } finally {
    await stopAll();
    reportErrors();
    rmSync(logDir, { recursive: true, force: true });
    const client = new pg.Client({ connectionString: bench.url });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
    agent.destroy();
  }
}

runBench(main, "bench:cluster");
