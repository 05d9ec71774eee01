/**
 * `npm run bench:webhooks`: the webhook goals of docs/webhooks.md, measured in one run on real
 * processes — two `mcp-tasks serve --workers 0` fronts and two `mcp-tasks worker` processes (the
 * compiled CLI, `node bin/mcp-tasks.js`) on one fresh PostgreSQL schema, a receiving HTTP server in
 * a process of its own (bench/support/webhook-receiver.mjs, verifying every delivery with the
 * `standardwebhooks` reference package), and a lean JSON-RPC client here that sends each request to
 * the next front in turn.
 *
 *   1. Throughput with webhooks off: `lanes` loops, each creating a task (`sleep {ms: 0}`,
 *      task-augmented) and fetching its result (tasks/result); tasks/s over `--tasks` tasks, after
 *      a warm-up. The cluster is then stopped and started again on a fresh schema with webhooks on.
 *   2. The same with webhooks on — two endpoints on the receiver, one subscribed to every type and
 *      one to `task.completed` only — and, for those tasks, the delivery lag: the time from the
 *      task's status change (`data.lastUpdatedAt`, the time the transition was committed with) to
 *      the moment the receiver holds the request. Same machine, one clock; millisecond resolution.
 *   3. An outage: `--tasks` more tasks; half way the receiver process is killed, the rest run
 *      while it is down, it comes back `--outage` seconds after it went down, and the bench waits
 *      for every event to arrive (the sender's default back-off: 1 s doubling, with jitter).
 *
 * Each endpoint must receive one distinct `webhook-id` per task, none lost. Throughput phases
 * alternate off/on `--rounds` times (a shared host's speed drifts over a run); the ratio is of the
 * sums. Flags: `npm run bench:webhooks -- --help`.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as pause } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";
import { exitOnHelp, numberFlag, runBench } from "./support/command-line.js";
import { machine } from "./support/machine.js";
import { NO_CALLER_LIMITS } from "./support/no-caller-limits.js";
import { cpuOf } from "./support/process-cpu.js";
import { openSession, RawRpc, taskIdIn, type RawResponse } from "./support/raw-rpc.js";
import { spread } from "./support/stats.js";
import { freePort } from "../test/support/free-port.js";

const HELP = `Usage: npm run bench:webhooks -- [flags]
  --pg URL         PostgreSQL (default $MCP_TASKS_BENCH_PG or postgres://postgres@127.0.0.1:5432/test)
  --tasks N        tasks per measured phase (default 1000)
  --warmup N       tasks before each throughput phase, not counted (default 3000: a fresh process
                   compiles its hot paths over its first thousands of requests, and a phase measured
                   sooner counts that compiling as the cost of each task)
  --lanes N        create→result loops at once (default 32; < 100, the per-requestor cap)
  --rounds N       off/on throughput rounds (default 2)
  --rate N         tasks/s of the lag phase (default: half the throughput measured with webhooks on)
  --outage S       seconds the receiver is down in the outage phase (default 30)
  --profile DIR    write a V8 CPU profile of every cluster process to DIR (.cpuprofile files)
  --help`;

const { values: flags } = parseArgs({
  options: {
    pg: { type: "string", default: process.env["MCP_TASKS_BENCH_PG"] ?? "postgres://postgres@127.0.0.1:5432/test" },
    tasks: { type: "string", default: "1000" },
    warmup: { type: "string", default: "3000" },
    lanes: { type: "string", default: "32" },
    rounds: { type: "string", default: "2" },
    rate: { type: "string" },
    outage: { type: "string", default: "30" },
    profile: { type: "string" },
    help: { type: "boolean", default: false },
  },
});
exitOnHelp(HELP, flags.help);
const PG_URL = flags.pg;
const TASKS = numberFlag(HELP, "tasks", flags.tasks, { min: 10 });
const WARMUP = numberFlag(HELP, "warmup", flags.warmup, { min: 0 });
const LANES = numberFlag(HELP, "lanes", flags.lanes, { min: 1, max: 99 });
const ROUNDS = numberFlag(HELP, "rounds", flags.rounds, { min: 1, max: 10 });
const OUTAGE_MS = numberFlag(HELP, "outage", flags.outage, { min: 0, max: 600, whole: false }) * 1000;

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const BIN = join(ROOT, "bin", "mcp-tasks.js");
const RECEIVER = fileURLToPath(new URL("./support/webhook-receiver.mjs", import.meta.url));
const SECRET = `whsec_${randomBytes(24).toString("base64")}`;
/** One endpoint, subscribed to every event type (the tasks here produce `task.completed`). */
const ENDPOINTS = { all: "/all" } as const;
const logDir = mkdtempSync(join(tmpdir(), "mcp-tasks-bench-webhooks-"));
/** Every process the bench started and that still runs: killed should the bench end early. */
const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

// ---- the receiver ------------------------------------------------------------------------------

interface Arrival {
  id: string;
  path: string;
  type?: string;
  taskId?: string;
  changedAt?: number;
  at: number;
  invalid?: string;
}

/** The receiving process: every request it acknowledged lands in `arrivals`, verified, once collected. */
class Receiver {
  readonly arrivals: Arrival[] = [];
  private child: ChildProcess | null = null;
  private collections = 0;
  private readonly collected = new Map<number, () => void>();
  constructor(readonly port: number) {}

  async start(): Promise<void> {
    const child = spawn(process.execPath, [RECEIVER, String(this.port), SECRET], { cwd: ROOT, stdio: ["pipe", "pipe", "inherit"] });
    this.child = child;
    running.add(child);
    child.once("exit", () => {
      running.delete(child);
      // A collection it can no longer answer ends (kill() collects before it kills).
      for (const done of this.collected.values()) done();
    });
    const listening = new Promise<void>((resolve, reject) => {
      child.once("exit", (code) => reject(new Error(`the receiver exited (${code})`)));
      createInterface({ input: child.stdout! }).on("line", (line) => {
        const parsed = JSON.parse(line) as Arrival | { listening: number } | { collected: number };
        if ("listening" in parsed) resolve();
        else if ("collected" in parsed) this.collected.get(parsed.collected)?.();
        else this.arrivals.push(parsed);
      });
    });
    await listening;
  }

  /** Has the receiver verify and report what it acknowledged so far (into `arrivals`). */
  async collect(command: "collect" | "crash" = "collect"): Promise<void> {
    const child = this.child;
    if (child === null || child.exitCode !== null) return;
    const n = ++this.collections;
    const done = new Promise<void>((resolve) => this.collected.set(n, resolve));
    child.stdin!.write(`${command} ${n}\n`);
    await done;
    this.collected.delete(n);
  }

  cpu(): number {
    return cpuOf(this.child?.pid) ?? 0;
  }

  /** Down as a crashed receiver is: the process gone, connections refused (what it acknowledged is collected as it goes). */
  async kill(): Promise<void> {
    const child = this.child;
    if (child === null || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    // It stops answering, reports what it answered, and is gone: nothing it acknowledged is lost.
    await this.collect("crash");
    child.kill("SIGKILL");
    await exited;
    this.child = null;
  }

  /** The arrivals for `tasks` at `path`. */
  of(tasks: ReadonlySet<string>, path: string): Arrival[] {
    return this.arrivals.filter((a) => a.path === path && a.taskId !== undefined && tasks.has(a.taskId));
  }
}

// ---- the cluster ------------------------------------------------------------------------------

class Cluster {
  private readonly children: ChildProcess[] = [];
  /** Each process's role, for CPU accounting. */
  readonly roles = new Map<ChildProcess, "front" | "worker">();
  readonly urls: string[] = [];
  private constructor(readonly schema: string) {}

  static async start(webhooksFile: string | null): Promise<Cluster> {
    const cluster = new Cluster(`bench_webhooks_${randomBytes(4).toString("hex")}`);
    const store = `${PG_URL}${PG_URL.includes("?") ? "&" : "?"}schema=${cluster.schema}`;
    const common = ["--demo", "--store", store, ...(webhooksFile === null ? [] : ["--webhooks", webhooksFile])];
    // One front first: it migrates the schema, so the others start on a ready one.
    cluster.urls.push(await cluster.front(common, 0));
    const rest = await Promise.all([cluster.front(common, 1), cluster.worker(common, 0), cluster.worker(common, 1)]);
    cluster.urls.push(rest[0]);
    return cluster;
  }

  private spawn(args: string[], what: string): ChildProcess {
    const log = openSync(this.logFile(what), "a");
    const profile = flags.profile === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${join(flags.profile, `${this.schema}-${what}`)}`];
    const child = spawn(process.execPath, [...profile, BIN, ...args], {
      cwd: ROOT,
      stdio: ["ignore", "ignore", log],
      env: { ...process.env, PORT: "" },
    });
    closeSync(log);
    this.children.push(child);
    this.roles.set(child, what.startsWith("front") ? "front" : "worker");
    running.add(child);
    child.once("exit", () => running.delete(child));
    return child;
  }

  /** Starts a front and resolves with its MCP URL (it prints it once listening). */
  private async front(common: string[], index: number): Promise<string> {
    const what = `front-${index}`;
    this.spawn(["serve", ...common, ...NO_CALLER_LIMITS, "--port", "0", "--workers", "0", "--no-web", "--log-level", "info"], what);
    return this.waitForLog(what, (line) => (typeof line["url"] === "string" ? line["url"] : undefined));
  }

  private async worker(common: string[], index: number): Promise<string> {
    const what = `worker-${index}`;
    this.spawn(["worker", ...common, "--concurrency", "64", "--log-level", "info"], what);
    return this.waitForLog(what, (line) => (line["msg"] === "worker started" ? "" : undefined));
  }

  private async waitForLog(what: string, pick: (line: Record<string, unknown>) => string | undefined): Promise<string> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const file = this.logFile(what);
      const text = existsSync(file) ? readFileSync(file, "utf8") : "";
      for (const raw of text.split("\n")) {
        if (!raw.startsWith("{")) continue;
        const found = pick(JSON.parse(raw) as Record<string, unknown>);
        if (found !== undefined) return found;
      }
      if (Date.now() > deadline) throw new Error(`${what} did not start within 30 s:\n${text.slice(-2000)}`);
      await pause(100);
    }
  }

  /** Each cluster's logs apart: a later cluster's front must not be found by an earlier one's URL line. */
  private logFile(what: string): string {
    return join(logDir, `${this.schema}-${what}.log`);
  }

  /** CPU ms used so far by the fronts and by the workers. */
  cpu(): { front: number; worker: number } {
    const sum = { front: 0, worker: 0 };
    for (const [child, role] of this.roles) sum[role] += cpuOf(child.pid) ?? 0;
    return sum;
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once("exit", () => resolve());
            // A profiled process must exit on its own to write its profile (SIGTERM: a clean stop).
            child.kill(flags.profile === undefined ? "SIGKILL" : "SIGTERM");
          }),
      ),
    );
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${this.schema} CASCADE`).finally(() => client.end());
  }
}

// ---- the load ----------------------------------------------------------------------------------

/** A session on the cluster's fronts, each request to the next front in turn. */
class Load {
  private seq = 0;
  private turn = 0;
  private constructor(
    private readonly fronts: RawRpc[],
    private readonly headers: Record<string, string>,
  ) {}

  static async open(urls: string[]): Promise<Load> {
    const fronts = urls.map((url) => new RawRpc(url, LANES + 8));
    const sessionId = await openSession(fronts[0]!, "2025-11-25");
    return new Load(fronts, { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" });
  }

  private async call(method: string, params: string): Promise<string> {
    const id = ++this.seq;
    const front = this.fronts[this.turn++ % this.fronts.length]!;
    const body = `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${params}}`;
    // A kept-alive socket the server closed as idle just as it was reused: the request was never
    // processed, so it is sent once more (the agent drops the dead socket; the next one it hands
    // out may have gone idle the same way, hence a few tries).
    const send = (tries: number): Promise<RawResponse> =>
      front.post(body, this.headers).catch((error: { code?: string }) => {
        if (error.code === "ECONNRESET" && tries > 1) return send(tries - 1);
        throw error;
      });
    const answer = await send(4);
    if (answer.status !== 200 || answer.text.includes('"error"'))
      throw new Error(`${method} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    return answer.text;
  }

  /** One task end to end: created through one front, its result fetched through the next. */
  async task(): Promise<string> {
    const created = await this.call("tools/call", '{"name":"sleep","arguments":{"ms":0},"task":{"ttl":600000}}');
    const taskId = taskIdIn(created);
    await this.call("tasks/result", `{"taskId":"${taskId}"}`);
    return taskId;
  }

  /** `count` tasks started at `perSecond` (open loop: each starts on time whatever the others do). */
  async paced(count: number, perSecond: number): Promise<Set<string>> {
    const ids = new Set<string>();
    const began = performance.now();
    const running: Promise<void>[] = [];
    for (let i = 0; i < count; i++) {
      const due = began + (i * 1000) / perSecond - performance.now();
      if (due > 0) await pause(due);
      running.push(this.task().then((id) => void ids.add(id)));
    }
    await Promise.all(running);
    return ids;
  }

  /** `count` tasks over `LANES` loops; `halfway` runs once when half of them are done. Returns their ids and tasks/s. */
  async run(count: number, halfway?: () => Promise<void>): Promise<{ ids: Set<string>; perSecond: number }> {
    const ids = new Set<string>();
    let started = 0;
    let half: Promise<void> | null = null;
    const began = performance.now();
    await Promise.all(
      Array.from({ length: LANES }, async () => {
        while (started < count) {
          started++;
          ids.add(await this.task());
          if (ids.size >= count / 2 && halfway !== undefined && half === null) half = halfway();
          if (half !== null) await half;
        }
      }),
    );
    return { ids, perSecond: (count * 1000) / (performance.now() - began) };
  }

  close(): void {
    for (const front of this.fronts) front.close();
  }
}

// ---- phases -----------------------------------------------------------------------------------

/** Waits until `receiver` holds an arrival at every endpoint for each of `tasks`; returns when the last arrived. */
async function allArrived(receiver: Receiver, tasks: ReadonlySet<string>, timeoutMs: number): Promise<number | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await receiver.collect();
    const done = Object.values(ENDPOINTS).every((path) => new Set(receiver.of(tasks, path).map((a) => a.taskId)).size === tasks.size);
    if (done) return Math.max(...Object.values(ENDPOINTS).flatMap((path) => receiver.of(tasks, path).map((a) => a.at)));
    if (Date.now() > deadline) return null;
    await pause(100);
  }
}

interface Delivery {
  /** Distinct webhook-ids received at each endpoint for the phase's tasks, and tasks with none. */
  perEndpoint: Record<string, { ids: number; lost: number; duplicates: number; byType: Record<string, number> }>;
  invalid: number;
}

async function tally(receiver: Receiver, tasks: ReadonlySet<string>): Promise<Delivery> {
  await receiver.collect();
  const perEndpoint: Delivery["perEndpoint"] = {};
  for (const [name, path] of Object.entries(ENDPOINTS)) {
    const arrivals = receiver.of(tasks, path);
    const ids = new Set(arrivals.map((a) => a.id));
    const seen = new Set(arrivals.map((a) => a.taskId));
    const byType: Record<string, number> = {};
    for (const id of ids) {
      const type = arrivals.find((a) => a.id === id)?.type ?? "?";
      byType[type] = (byType[type] ?? 0) + 1;
    }
    perEndpoint[name] = {
      ids: ids.size,
      lost: [...tasks].filter((t) => !seen.has(t)).length,
      duplicates: arrivals.length - ids.size,
      byType,
    };
  }
  return { perEndpoint, invalid: receiver.arrivals.filter((a) => a.invalid !== undefined).length };
}

/**
 * The process ids of the PostgreSQL backends serving `schema`'s cluster: those whose last statement
 * named the schema (every statement of the store does). Empty when PostgreSQL runs on another host
 * (their CPU is then not read). Other users of the server are left out.
 */
async function backendsOf(schema: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    const found = await client.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND strpos(query, $1) > 0",
      [schema],
    );
    return found.rows.map((row) => row.pid).filter((pid) => existsSync(`/proc/${pid}/stat`));
  } finally {
    await client.end();
  }
}

interface Phase {
  perSecond: number;
  ids: Set<string>;
  /**
   * CPU ms per task: fronts, workers, the receiver, the cluster's PostgreSQL backends (when
   * PostgreSQL runs on this host; the server's shared processes and backends that exit during the
   * phase are left out) and this process's load client.
   */
  cpu: { front: number; worker: number; receiver: number; postgres: number | null; client: number };
  cluster: Cluster;
  load: Load;
}

async function throughput(webhooksFile: string | null, receiver: Receiver): Promise<Phase> {
  const cluster = await Cluster.start(webhooksFile);
  const load = await Load.open(cluster.urls);
  await load.run(WARMUP);
  const backends = await backendsOf(cluster.schema);
  const backendCpu = (): Map<number, number> => new Map(backends.map((pid) => [pid, cpuOf(pid) ?? 0]));
  const sample = (): { front: number; worker: number; receiver: number; postgres: Map<number, number>; client: number } => {
    const usage = process.cpuUsage();
    return { ...cluster.cpu(), receiver: receiver.cpu(), postgres: backendCpu(), client: (usage.user + usage.system) / 1000 };
  };
  const before = sample();
  const { perSecond, ids } = await load.run(TASKS);
  const after = sample();
  // Backends opened during the phase: all their CPU is the phase's.
  for (const pid of await backendsOf(cluster.schema)) if (!before.postgres.has(pid)) after.postgres.set(pid, cpuOf(pid) ?? 0);
  for (const pid of after.postgres.keys()) if (!before.postgres.has(pid)) before.postgres.set(pid, 0);
  let postgres: number | null = null;
  if (after.postgres.size > 0) {
    postgres = 0;
    // A backend gone meanwhile reads 0 at the end: left out rather than counted negative.
    for (const [pid, end] of after.postgres) postgres += Math.max(0, end - (before.postgres.get(pid) ?? end));
    postgres /= TASKS;
  }
  const cpu = {
    front: (after.front - before.front) / TASKS,
    worker: (after.worker - before.worker) / TASKS,
    receiver: (after.receiver - before.receiver) / TASKS,
    postgres,
    client: (after.client - before.client) / TASKS,
  };
  return { perSecond, ids, cpu, cluster, load };
}

const cpuText = (c: Phase["cpu"]): string =>
  `CPU/task fronts ${c.front.toFixed(2)} ms, workers ${c.worker.toFixed(2)} ms, receiver ${c.receiver.toFixed(2)} ms, ` +
  `${c.postgres === null ? "" : `PostgreSQL ${c.postgres.toFixed(2)} ms, `}load client ${c.client.toFixed(2)} ms`;

function webhooksFileFor(port: number): string {
  const file = join(logDir, "webhooks.json");
  const endpoint = (id: string, path: string, events?: string[]): Record<string, unknown> => ({
    id,
    url: `http://127.0.0.1:${port}${path}`,
    secret: SECRET,
    allowPrivate: ["127.0.0.1"],
    ...(events !== undefined && { events }),
  });
  writeFileSync(file, JSON.stringify({ endpoints: [endpoint("all", ENDPOINTS.all)] }));
  return file;
}

const ms = (n: number): string => `${n.toFixed(0)} ms`;
const mark = (ok: boolean): string => (ok ? "met" : "NOT MET");

async function main(): Promise<void> {
  const began = Date.now();
  if (!existsSync(join(ROOT, "dist", "cli", "main.js"))) {
    console.log("building dist/ (npm run build)…");
    execFileSync("npm", ["run", "build", "--silent"], { cwd: ROOT, stdio: "inherit" });
  }
  const here = machine();
  console.log(
    `machine: ${here.cores} × ${here.model}, ${here.ramGiB.toFixed(1)} GiB RAM, ${here.os}, node ${here.node}, load ${here.load}`,
  );
  console.log(`run:     ${new Date().toISOString()}; ${TASKS} tasks per phase, ${WARMUP} warm-up, ${LANES} lanes, ${ROUNDS} off/on rounds`);
  const receiver = new Receiver(await freePort());
  await receiver.start();
  const file = webhooksFileFor(receiver.port);

  const off: number[] = [];
  const on: number[] = [];
  /** CPU per task of each throughput phase, for the cluster's own share of what webhooks cost. */
  const offCpu: Phase["cpu"][] = [];
  const onCpu: Phase["cpu"][] = [];
  const lags: number[] = [];
  const saturated: number[] = [];

  let last: { cluster: Cluster; load: Load } | null = null;
  for (let round = 0; round < ROUNDS; round++) {
    const t0 = Date.now();
    const plain = await throughput(null, receiver);
    off.push(plain.perSecond);
    offCpu.push(plain.cpu);
    plain.load.close();
    await plain.cluster.stop();
    const hooked = await throughput(file, receiver);
    on.push(hooked.perSecond);
    onCpu.push(hooked.cpu);
    // The lag at full load: every task's delivery queued behind the others'.
    if ((await allArrived(receiver, hooked.ids, 60_000)) !== null)
      for (const a of receiver.of(hooked.ids, ENDPOINTS.all)) saturated.push(a.at - a.changedAt!);
    console.log(
      `round ${round + 1} (${((Date.now() - t0) / 1000).toFixed(0)} s): off ${plain.perSecond.toFixed(0)} tasks/s, ${cpuText(plain.cpu)}\n` +
        `         on  ${hooked.perSecond.toFixed(0)} tasks/s, ${cpuText(hooked.cpu)}`,
    );
    if (round < ROUNDS - 1) {
      hooked.load.close();
      await hooked.cluster.stop();
    } else last = hooked;
  }

  // Lag and counts for a healthy receiver: a phase of its own on the last cluster with webhooks on.
  const { cluster, load } = last!;
  // Open loop at a rate the cluster keeps up with: the lag of a delivery, not of a queue of tasks.
  const rate =
    flags.rate === undefined
      ? Math.max(5, Math.round(Math.min(...on) / 2))
      : numberFlag(HELP, "rate", flags.rate, { min: 1, max: 10_000, whole: false });
  const pacedAt = Date.now();
  const healthyIds = await load.paced(TASKS, rate);
  if ((await allArrived(receiver, healthyIds, 60_000)) === null) console.error("healthy phase: not every event arrived within 60 s");
  const pacedMs = Date.now() - pacedAt;
  const healthy = await tally(receiver, healthyIds);
  for (const path of Object.values(ENDPOINTS)) for (const a of receiver.of(healthyIds, path)) lags.push(a.at - a.changedAt!);

  // The outage: the receiver killed half way, back OUTAGE_MS after.
  let downAt = 0;
  const outageRun = await load.run(TASKS, async () => {
    await receiver.kill();
    downAt = Date.now();
  });
  const tasksDoneAt = Date.now();
  await pause(Math.max(0, downAt + OUTAGE_MS - Date.now()));
  await receiver.start();
  const upAt = Date.now();
  const lastArrival = await allArrived(receiver, outageRun.ids, 10 * 60_000);
  const outage = await tally(receiver, outageRun.ids);
  load.close();
  await cluster.stop();
  await receiver.kill();

  const lag = spread(lags);
  const offSum = off.reduce((a, b) => a + b, 0);
  const onSum = on.reduce((a, b) => a + b, 0);
  const ratio = onSum / offSum;
  const complete = (d: Delivery): boolean => Object.values(d.perEndpoint).every((e) => e.ids === TASKS && e.lost === 0) && d.invalid === 0;
  const counts = (d: Delivery): string =>
    Object.entries(d.perEndpoint)
      .map(
        ([, e]) =>
          `${Object.entries(e.byType)
            .map(([type, n]) => `${type} ${n} distinct ids`)
            .join(", ")}; ${e.lost} lost; ${e.duplicates} sent twice`,
      )
      .join("; ");

  const atFull = spread(saturated);
  const row = (goal: string, measured: string): void => console.log(`${goal.padEnd(48)} ${measured}`);
  console.log("");
  row("goal", "measured");
  row(`${TASKS} tasks → ${TASKS} distinct ids per type, 0 lost`, `${counts(healthy)} — ${mark(complete(healthy))}`);
  row(
    `receiver down ${(OUTAGE_MS / 1000).toFixed(0)} s: all delivered after`,
    `${counts(outage)} — ${mark(complete(outage) && lastArrival !== null)}`,
  );
  row(
    "",
    `down ${ms(upAt - downAt)} (the tasks all done ${ms(tasksDoneAt - downAt)} after it went down); last event ${lastArrival === null ? "never" : ms(lastArrival - upAt)} after it came back`,
  );
  row(`delivery lag p50 ≤ 50 ms (${rate} tasks/s)`, `${ms(lag.p50)} — ${mark(lag.p50 <= 50)}`);
  row(
    `delivery lag p99 ≤ 500 ms (${rate} tasks/s)`,
    `${ms(lag.p99)} (p95 ${ms(lag.p95)}, max ${ms(lag.max)}, n ${lag.n}; phase ${ms(pacedMs)}) — ${mark(lag.p99 <= 500)}`,
  );
  row("  (at full load, for comparison)", `p50 ${ms(atFull.p50)}, p99 ${ms(atFull.p99)} (n ${atFull.n})`);
  row(
    "throughput on ≥ 0.85 × off",
    `${ratio.toFixed(2)} × (off ${off.map((n) => n.toFixed(0)).join(", ")}; on ${on.map((n) => n.toFixed(0)).join(", ")} tasks/s) — ${mark(ratio >= 0.85)}`,
  );
  // On a host of its own a receiver costs the cluster nothing: the cluster's CPU per task off and
  // on (fronts, workers and their PostgreSQL backends, every round summed) is the throughput ratio
  // it would reach there, when its CPU is what limits it.
  const clusterCpu = (phases: Phase["cpu"][]): number | null =>
    phases.some((c) => c.postgres === null) ? null : phases.reduce((sum, c) => sum + c.front + c.worker + c.postgres!, 0) / phases.length;
  const clusterOff = clusterCpu(offCpu);
  const clusterOn = clusterCpu(onCpu);
  if (clusterOff !== null && clusterOn !== null)
    row(
      "  (the cluster's CPU per task, receiver and load client left out)",
      `off ${clusterOff.toFixed(2)} ms, on ${clusterOn.toFixed(2)} ms: ${(clusterOff / clusterOn).toFixed(2)} × the tasks per CPU-second`,
    );
  console.log(`\ntook ${((Date.now() - began) / 1000).toFixed(0)} s; process logs in ${logDir}`);
  if (!(complete(healthy) && complete(outage))) throw new Error(`events were lost; process logs in ${logDir}`);
  rmSync(logDir, { recursive: true, force: true });
}

runBench(main, "bench:webhooks");
