/**
 * `npm run bench`: the receiver side, ours (serveHttp + createTaskServer on a SQLite file, demo
 * tools) against a baseline written with the SDK's own experimental tasks (InMemoryTaskStore,
 * bench/sdk-baseline-server.ts), both over real Streamable HTTP on 127.0.0.1, in this process.
 *
 *   1. tasks/result wake-up latency: from the moment a `sleep` task's work ends (stamped
 *      server-side, before the outcome is stored) to the moment the client holds the tasks/result
 *      response. tasks/result is sent while the task is still working, so the waiter is blocked.
 *      Driven by the SDK `Client` in this process, so the stamps and the receive time share a clock.
 *   2. task creation, then `tasks/get`, per second at a fixed concurrency, from a low-overhead raw
 *      HTTP client in a child process (bench/support/raw-load.ts: the SDK Client costs more per
 *      request than either server and capped both near 400/s). Ours in both protocol eras
 *      (2025-11-25 sessions, 2026-07-28 stateless), the SDK in 2025-11-25, in rotating rounds so
 *      all see the same machine; with each server's CPU per request.
 *   3. tasks/list walk: time to walk every page over N existing (completed) tasks.
 *
 * Writes the wake-up and creation latency distributions as SVG (docs/bench/receiver-*.svg).
 * Flags: `npm run bench -- --help`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as pause } from "node:timers/promises";
import { parseArgs } from "node:util";
import type { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, CreateTaskResultSchema, ListTasksResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { newTaskId } from "../src/core/task-id.js";
import { registerDemoTools } from "../src/demo/demo-tools.js";
import { serveHttp } from "../src/http/http-server.js";
import { createTaskServer, type TaskServer } from "../src/mcp/task-server.js";
import { sqliteStore } from "../src/store/sqlite/sqlite-store.js";
import { startSdkBaseline } from "./sdk-baseline-server.js";
import { exitOnHelp, numberFlag, runBench, type NumberRange } from "./support/command-line.js";
import { RawLoad, type LoadEra, type LoadOp } from "./support/raw-load.js";
import { machine } from "./support/machine.js";
import { spread } from "./support/stats.js";
import { distributionChartSvg } from "./support/svg-chart.js";

const HELP = `Usage: npm run bench -- [flags]
  --samples N        tasks/result wake-up samples per server (default 200)
  --sleep-ms MS      least sleep of a wake-up sample; tasks/result is sent while it runs (default 50)
  --sdk-poll-ms MS   pollInterval of the SDK baseline's tasks (default 1000, the SDK's default)
  --sdk-lanes N      wake-up samples run at once against that baseline, whose wake-up is bound by
                     its poll interval (sequential would take samples x poll-ms; default 40)
  --tuned-poll-ms MS also the SDK baseline with this short pollInterval, sampled sequentially and
                     interleaved with ours (default 10)
  --concurrency N    in-flight task creations (default 16)
  --clients N        sessions the in-flight creations are spread over (default 4)
  --duration S       seconds of creation, and of tasks/get, per server and era (default 8), after 0.5 s warm-up
  --rounds N         rotating rounds the duration is split into (default 8), so that all three
                     see the same load of a shared machine
  --list-tasks N     tasks present for the tasks/list walk (default 2000)
  --charts DIR       where the latency distribution charts go (receiver-wake-up.svg,
                     receiver-creation.svg; default docs/bench; "-" for none)
  --help`;

const { values: flags } = parseArgs({
  options: {
    samples: { type: "string", default: "200" },
    "sleep-ms": { type: "string", default: "50" },
    "sdk-poll-ms": { type: "string", default: "1000" },
    "sdk-lanes": { type: "string", default: "40" },
    "tuned-poll-ms": { type: "string", default: "10" },
    concurrency: { type: "string", default: "16" },
    clients: { type: "string", default: "4" },
    duration: { type: "string", default: "8" },
    rounds: { type: "string", default: "8" },
    "list-tasks": { type: "string", default: "2000" },
    charts: { type: "string", default: "docs/bench" },
    help: { type: "boolean", default: false },
  },
});
exitOnHelp(HELP, flags.help);
const flag = (name: Exclude<keyof typeof flags, "help" | "charts">, range: NumberRange): number =>
  numberFlag(HELP, name, flags[name], range);
const SAMPLES = flag("samples", { min: 1 });
const SLEEP_MS = flag("sleep-ms", { min: 20 });
const SDK_POLL_MS = flag("sdk-poll-ms", { min: 1 });
const SDK_LANES = flag("sdk-lanes", { min: 1 });
const TUNED_POLL_MS = flag("tuned-poll-ms", { min: 1 });
const CONCURRENCY = flag("concurrency", { min: 1 });
const CLIENTS = Math.min(flag("clients", { min: 1 }), CONCURRENCY);
const DURATION_MS = flag("duration", { min: 0.1, whole: false }) * 1000;
const ROUNDS = flag("rounds", { min: 1 });
const WARMUP_MS = 500;
const LIST_TASKS = flag("list-tasks", { min: 1 });
/** ttl of every task the bench creates: outlives the run, short enough not to pile up anywhere. */
const TASK_TTL_MS = 300_000;

const now = (): number => performance.now();

/** A server under test: its URL and the moments (performance.now) at which its tasks' work ended. */
interface Target {
  name: string;
  url: string;
  workDone: Map<string, number>;
  /** Puts `count` completed `sleep` tasks of `sessionId` straight into the server's store. */
  seed(count: number, sessionId: string): Promise<void>;
  close(): Promise<void>;
}

async function startOurs(): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-bench-"));
  const workDone = new Map<string, number>();
  // Defaults everywhere except the per-owner caps (active and stored tasks): the SDK baseline has
  // none, and the throughput phase must not be throttled by them (every bench task ends within
  // milliseconds; a 2026-07-28 client without auth is one requestor for all its tasks). inlineWaitMs 0:
  // a 2026-07-28 creation answers with its CreateTaskResult at once, as a 2025-11-25 one does.
  // Rate limit off: every session of the bench is one anonymous caller on 127.0.0.1, far over 100 ops/s by design.
  const app = createTaskServer({
    name: "bench",
    version: "1.0.0",
    store: sqliteStore(join(dir, "tasks.db")),
    maxActivePerOwner: 100_000,
    maxStoredPerOwner: 10_000_000,
    rateLimit: "off",
    inlineWaitMs: 0,
  });
  // The demo tools, with `sleep` wrapped to stamp the moment its work ends (before the outcome is stored).
  const stamping = Object.create(app) as TaskServer;
  stamping.tool = ((name, definition, handler) =>
    app.tool(
      name,
      definition,
      name !== "sleep"
        ? handler
        : async (args, ctx) => {
            const result = await handler(args, ctx);
            if (ctx.taskId !== null) workDone.set(ctx.taskId, now());
            return result;
          },
    )) as TaskServer["tool"];
  registerDemoTools(stamping);
  const http = await serveHttp(app, { port: 0, host: "127.0.0.1" });
  const store = app.engine.store;
  return {
    name: "ours",
    url: http.url,
    workDone,
    async seed(count, sessionId) {
      for (let i = 0; i < count; i++) {
        const task = await store.create({
          id: newTaskId(),
          owner: null,
          method: "tools/call",
          name: "sleep",
          request: { name: "sleep", arguments: { ms: 0 } },
          origin: { sessionId, progressToken: null, accepts: [] },
          createdAt: Date.now(),
          ttlMs: TASK_TTL_MS,
          pollIntervalMs: 1000,
          retryable: false,
        });
        await store.transition(task.id, ["working"], "completed", {
          outcome: { kind: "result", value: { content: [{ type: "text", text: "slept 0 ms" }] } },
          now: Date.now(),
        });
      }
    },
    async close() {
      await http.close();
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function startSdk(pollIntervalMs: number): Promise<Target> {
  const workDone = new Map<string, number>();
  const handle = await startSdkBaseline({ pollIntervalMs, onWorkDone: (taskId) => workDone.set(taskId, now()) });
  const store: InMemoryTaskStore = handle.taskStore;
  return {
    name: `SDK poll ${pollIntervalMs} ms`,
    url: handle.url,
    workDone,
    async seed(count, sessionId) {
      for (let i = 0; i < count; i++) {
        const request = { method: "tools/call", params: { name: "sleep", arguments: { ms: 0 } } };
        const task = await store.createTask({ ttl: TASK_TTL_MS, pollInterval: pollIntervalMs }, i, request, sessionId);
        await store.storeTaskResult(task.taskId, "completed", { content: [{ type: "text", text: "slept 0 ms" }] }, sessionId);
      }
    },
    close: () => handle.close(),
  };
}

async function connect(url: string): Promise<{ client: Client; sessionId: string }> {
  const client = new Client({ name: "bench", version: "1.0.0" }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  if (transport.sessionId === undefined) throw new Error(`no session id from ${url}`);
  return { client, sessionId: transport.sessionId };
}

async function createSleepTask(client: Client, ms: number): Promise<string> {
  const created = await client.request({ method: "tools/call", params: { name: "sleep", arguments: { ms } } }, CreateTaskResultSchema, {
    task: { ttl: TASK_TTL_MS },
  });
  return created.task.taskId;
}

// ---------------------------------------------------------------------------------------------
// 1. tasks/result wake-up latency

class WakeSamples {
  readonly latencies: number[] = [];
  /** Samples dropped because tasks/result left the client after the work had ended (not blocked). */
  notBlocked = 0;

  summary(): ReturnType<typeof spread> & { notBlocked: number; latencies: readonly number[] } {
    return { ...spread(this.latencies), notBlocked: this.notBlocked, latencies: this.latencies };
  }
}
type WakeSummary = ReturnType<WakeSamples["summary"]>;

/**
 * One sample: a sleep task of `SLEEP_MS + U[0, jitterMs)` (so the work ends at a random phase of a
 * poller's cycle), tasks/result sent at once, latency = response received - work ended.
 */
async function wakeSample(target: Target, client: Client, jitterMs: number, into: WakeSamples): Promise<void> {
  const taskId = await createSleepTask(client, SLEEP_MS + Math.floor(Math.random() * jitterMs));
  const sent = now();
  await client.request({ method: "tasks/result", params: { taskId } }, CallToolResultSchema);
  const received = now();
  const done = target.workDone.get(taskId);
  if (done === undefined) throw new Error(`${target.name}: no work-end stamp for task ${taskId}`);
  target.workDone.delete(taskId);
  if (sent >= done) into.notBlocked++;
  else into.latencies.push(received - done);
}

/** Round trip of `ping` (answered by the SDK's own Server in both): the stack's per-message floor. */
async function pingFloor(a: Client, b: Client): Promise<[number, number]> {
  const times: [number[], number[]] = [[], []];
  for (let i = 0; i < 100; i++) {
    for (const [k, client] of [a, b].entries()) {
      const started = now();
      await client.ping();
      if (i >= 10) times[k]!.push(now() - started);
    }
  }
  return [spread(times[0]).p50, spread(times[1]).p50];
}

/** Ours and the tuned SDK baseline, one sample each in turn, so both see the same machine. */
async function wakeInterleaved(ours: Target, tuned: Target): Promise<[WakeSummary, WakeSummary, [number, number]]> {
  const a = await connect(ours.url);
  const b = await connect(tuned.url);
  const ping = await pingFloor(a.client, b.client);
  const oursSamples = new WakeSamples();
  const tunedSamples = new WakeSamples();
  for (let i = 0; i < 5; i++) {
    // Warm-up, not recorded.
    await wakeSample(ours, a.client, TUNED_POLL_MS, new WakeSamples());
    await wakeSample(tuned, b.client, TUNED_POLL_MS, new WakeSamples());
  }
  for (let i = 0; i < SAMPLES; i++) {
    await wakeSample(ours, a.client, TUNED_POLL_MS, oursSamples);
    await wakeSample(tuned, b.client, TUNED_POLL_MS, tunedSamples);
  }
  await Promise.all([a.client.close(), b.client.close()]);
  return [oursSamples.summary(), tunedSamples.summary(), ping];
}

/** The SDK baseline at its default poll interval: SDK_LANES samples at a time, one session each. */
async function wakeLanes(target: Target, pollMs: number): Promise<WakeSummary> {
  const lanes = await Promise.all(Array.from({ length: Math.min(SDK_LANES, SAMPLES) }, () => connect(target.url)));
  const samples = new WakeSamples();
  let started = 0;
  await Promise.all(
    lanes.map(async ({ client }, lane) => {
      await pause((lane * pollMs) / lanes.length); // spread the lanes over one poll cycle
      while (started < SAMPLES) {
        started++;
        await wakeSample(target, client, pollMs, samples);
      }
    }),
  );
  await Promise.all(lanes.map(({ client }) => client.close()));
  return samples.summary();
}

// ---------------------------------------------------------------------------------------------
// 2. task creation and tasks/get throughput, with a low-overhead client in its own process

interface Throughput {
  perSecond: number;
  count: number;
  /** CPU of this (the servers') process per answered request, µs: the server's own cost, whatever the machine's load. */
  serverCpuUs: number;
  /** The same for the load generator's process. */
  clientCpuUs: number;
  roundRates: number[];
  latencies: number[];
  p50: number;
  p95: number;
}

/** One server and era under load, its rounds added up. */
class Lanes {
  readonly roundRates: number[] = [];
  readonly latencies: number[] = [];
  count = 0;
  measuredMs = 0;
  serverCpuMs = 0;
  clientCpuMs = 0;

  private constructor(
    readonly name: string,
    private readonly load: RawLoad,
  ) {}

  static async open(name: string, url: string, era: LoadEra): Promise<Lanes> {
    return new Lanes(name, await RawLoad.open({ url, era, concurrency: CONCURRENCY, sessions: CLIENTS, ttlMs: TASK_TTL_MS }));
  }

  async run(op: LoadOp, ms: number, warmUp: boolean): Promise<void> {
    const cpu = process.cpuUsage();
    const round = await this.load.run(op, ms, !warmUp);
    const used = process.cpuUsage(cpu);
    // Drain: let the last tasks run and their notifications go out before the other server's turn.
    await pause(100);
    if (warmUp) return;
    this.count += round.count;
    this.measuredMs += ms;
    this.serverCpuMs += (used.user + used.system) / 1000;
    this.clientCpuMs += round.clientCpuMs;
    this.roundRates.push(round.count / (ms / 1000));
    for (const latency of round.latencies) this.latencies.push(latency);
  }

  /** The rounds so far, and starts afresh for the next operation. */
  take(): Throughput {
    const { p50, p95 } = spread(this.latencies);
    const perRequest = (ms: number): number => (ms * 1000) / this.count;
    const taken = {
      perSecond: this.count / (this.measuredMs / 1000),
      count: this.count,
      serverCpuUs: perRequest(this.serverCpuMs),
      clientCpuUs: perRequest(this.clientCpuMs),
      roundRates: [...this.roundRates],
      latencies: [...this.latencies],
      p50,
      p95,
    };
    this.roundRates.length = 0;
    this.latencies.length = 0;
    this.count = 0;
    this.measuredMs = 0;
    this.serverCpuMs = 0;
    this.clientCpuMs = 0;
    return taken;
  }

  close(): Promise<void> {
    return this.load.close();
  }
}

/** Ours in both eras and the SDK baseline, `op` in ROUNDS rounds each, the order rotating every round. */
async function rotate(lanes: Lanes[], op: LoadOp): Promise<Throughput[]> {
  for (const lane of lanes) await lane.run(op, WARMUP_MS, true);
  for (let round = 0; round < ROUNDS; round++) {
    // Rotate who goes first, so none always follows another's drain.
    const order = lanes.map((_, i) => lanes[(i + round) % lanes.length]!);
    for (const lane of order) await lane.run(op, DURATION_MS / ROUNDS, false);
  }
  return lanes.map((lane) => lane.take());
}

interface Rates {
  /** ours 2025-11-25, ours 2026-07-28, SDK 2025-11-25 */
  create: Throughput[];
  get: Throughput[];
}

async function throughput(ours: Target, sdk: Target): Promise<Rates> {
  const lanes = [
    await Lanes.open("ours 2025-11-25", ours.url, "2025-11-25"),
    await Lanes.open("ours 2026-07-28", ours.url, "2026-07-28"),
    await Lanes.open("SDK", sdk.url, "2025-11-25"),
  ];
  try {
    const create = await rotate(lanes, "create");
    // tasks/get of the tasks each lane's session created (completed by now).
    const get = await rotate(lanes, "get");
    return { create, get };
  } finally {
    for (const lane of lanes) await lane.close();
  }
}

// ---------------------------------------------------------------------------------------------
// 3. tasks/list walk

interface ListWalk {
  ms: number;
  pages: number;
  tasks: number;
}

async function walk(client: Client): Promise<ListWalk> {
  const started = now();
  let cursor: string | undefined;
  let pages = 0;
  let tasks = 0;
  do {
    const page = await client.request({ method: "tasks/list", params: cursor === undefined ? {} : { cursor } }, ListTasksResultSchema);
    pages++;
    tasks += page.tasks.length;
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return { ms: now() - started, pages, tasks };
}

/** LIST_TASKS completed tasks of one session in each fresh server; median of 3 alternating walks. */
async function listWalks(ours: Target, sdk: Target): Promise<[ListWalk, ListWalk]> {
  const targets = [ours, sdk];
  const sessions = await Promise.all(targets.map((t) => connect(t.url)));
  for (const [i, target] of targets.entries()) await target.seed(LIST_TASKS, sessions[i]!.sessionId);
  for (const session of sessions) await walk(session.client); // warm-up
  const walks: ListWalk[][] = [[], []];
  for (let round = 0; round < 3; round++) {
    for (const i of [0, 1]) walks[i]!.push(await walk(sessions[i]!.client));
  }
  await Promise.all(sessions.map((s) => s.client.close()));
  const medians = walks.map((w) => [...w].sort((a, b) => a.ms - b.ms)[1]!);
  for (const [i, median] of medians.entries()) {
    if (median.tasks !== LIST_TASKS)
      throw new Error(`${targets[i]!.name}: tasks/list walked ${median.tasks} tasks, expected ${LIST_TASKS}`);
  }
  return [medians[0]!, medians[1]!];
}

// ---------------------------------------------------------------------------------------------

async function withTargets<T>(starts: Array<() => Promise<Target>>, run: (targets: Target[]) => Promise<T>): Promise<T> {
  const targets: Target[] = [];
  try {
    for (const start of starts) targets.push(await start());
    return await run(targets);
  } finally {
    for (const target of targets) await target.close();
  }
}

function progress(message: string): void {
  process.stderr.write(`  ${message}\n`);
}

async function main(): Promise<void> {
  const began = now();
  process.stderr.write("bench: running (progress on stderr, results on stdout)\n");

  progress(`wake-up: ours and SDK (pollInterval ${TUNED_POLL_MS} ms), ${SAMPLES} samples each, interleaved`);
  const [oursWake, tunedWake, ping] = await withTargets([startOurs, () => startSdk(TUNED_POLL_MS)], ([o, t]) => wakeInterleaved(o!, t!));
  progress(`wake-up: SDK (pollInterval ${SDK_POLL_MS} ms), ${SAMPLES} samples, ${SDK_LANES} at a time`);
  const sdkWake = await withTargets([() => startSdk(SDK_POLL_MS)], ([t]) => wakeLanes(t!, SDK_POLL_MS));

  progress(
    `creation, then tasks/get: raw HTTP client process, ${CONCURRENCY} in flight (2025-11-25: over ${CLIENTS} sessions), ${DURATION_MS / 1000} s each in ${ROUNDS} rotating rounds`,
  );
  const rates = await withTargets([startOurs, () => startSdk(SDK_POLL_MS)], ([o, s]) => throughput(o!, s!));
  const [oursCreate, modernCreate, sdkCreate] = rates.create as [Throughput, Throughput, Throughput];
  const [oursGet, modernGet, sdkGet] = rates.get as [Throughput, Throughput, Throughput];

  progress(`tasks/list: walks over ${LIST_TASKS} tasks`);
  const [oursList, sdkList] = await withTargets([startOurs, () => startSdk(SDK_POLL_MS)], ([o, s]) => listWalks(o!, s!));

  const f = (n: number, digits = 2): string => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");
  const ratio = (a: number, b: number): string => {
    if (!(b > 0) || !Number.isFinite(a)) return "n/a";
    const r = a / b;
    return `${r.toFixed(r < 0.1 ? 4 : 2)}x`;
  };
  const wakeRows = (sdk: WakeSummary, poll: number, target: boolean): string[][] => [
    [
      `tasks/result wake-up p50 (ms), SDK poll ${poll} ms`,
      f(oursWake.p50),
      f(sdk.p50),
      ratio(oursWake.p50, sdk.p50),
      target ? `ours <= 2 ms: ${oursWake.p50 <= 2 ? "PASS" : "MISS"}` : "",
    ],
    [`tasks/result wake-up p95 (ms), SDK poll ${poll} ms`, f(oursWake.p95), f(sdk.p95), ratio(oursWake.p95, sdk.p95), ""],
  ];
  const rateRows = (label: string, what: string, mine: Throughput, sdk: Throughput, target: number): string[][] => [
    [
      label,
      f(mine.perSecond, 0),
      f(sdk.perSecond, 0),
      ratio(mine.perSecond, sdk.perSecond),
      `>= ${target}x: ${mine.perSecond >= target * sdk.perSecond ? "PASS" : "MISS"}`,
    ],
    [`  ${what} latency p50 / p95 (ms)`, `${f(mine.p50)} / ${f(mine.p95)}`, `${f(sdk.p50)} / ${f(sdk.p95)}`, ratio(mine.p50, sdk.p50), ""],
    [`  server CPU per ${what} (µs)`, f(mine.serverCpuUs, 0), f(sdk.serverCpuUs, 0), ratio(mine.serverCpuUs, sdk.serverCpuUs), ""],
  ];
  const rows: string[][] = [
    ["metric", "ours (SQLite)", "SDK (in-memory)", "ours/SDK", "target"],
    ...wakeRows(sdkWake, SDK_POLL_MS, true),
    ...wakeRows(tunedWake, TUNED_POLL_MS, false),
    ["ping round trip p50 (ms), HTTP stack floor", f(ping[0]), f(ping[1]), ratio(ping[0], ping[1]), ""],
    ...rateRows("task creation (tasks/s)", "creation", oursCreate, sdkCreate, 2),
    ...rateRows("task creation, ours 2026-07-28 stateless (tasks/s)", "creation", modernCreate, sdkCreate, 2),
    ...rateRows("tasks/get (answers/s)", "tasks/get", oursGet, sdkGet, 3),
    ...rateRows("tasks/get, ours 2026-07-28 stateless (answers/s)", "tasks/get", modernGet, sdkGet, 3),
    [`tasks/list walk over ${LIST_TASKS} tasks (ms)`, f(oursList.ms), f(sdkList.ms), ratio(oursList.ms, sdkList.ms), ""],
    [
      "  pages (page size)",
      `${oursList.pages} (${Math.ceil(LIST_TASKS / oursList.pages)})`,
      `${sdkList.pages} (${Math.ceil(LIST_TASKS / sdkList.pages)})`,
      "",
      "",
    ],
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]): string =>
    r
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();

  const here = machine();
  const out: string[] = [];
  out.push("mcp-tasks receiver bench");
  out.push(`machine: ${here.cores} CPUs (${here.model}), node ${here.node}, ${here.os}, load average ${here.load}`);
  out.push(
    "setup:   servers in this one process, Streamable HTTP on 127.0.0.1, port 0; wake-up, ping and list through the SDK Client (StreamableHTTPClientTransport)",
  );
  out.push(
    "         in this process too (one clock with the servers' stamps); creation and tasks/get from a raw HTTP client in a child process",
  );
  out.push(
    "ours:    serveHttp + createTaskServer + demo tools; sqliteStore (WAL, synchronous=NORMAL) on a temp file, deleted after the run",
  );
  out.push(
    "SDK:     McpServer + experimental.tasks.registerToolTask('sleep'); InMemoryTaskStore + InMemoryTaskMessageQueue (bench/sdk-baseline-server.ts)",
  );
  out.push("");
  out.push(line(rows[0]!));
  out.push(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows.slice(1)) out.push(line(r));
  out.push("");
  out.push(
    `wake-up:  ${SAMPLES} samples per server: sleep ${SLEEP_MS} ms + U[0, pollInterval) so the work ends at a random phase of the SDK's poll; tasks/result`,
  );
  out.push("          sent at once; latency = client holds the response - the sleep ended (server-side stamp, same clock).");
  out.push(
    `          ours and SDK pollInterval ${TUNED_POLL_MS}: sequential, interleaved sample by sample; SDK pollInterval ${SDK_POLL_MS}: ${Math.min(SDK_LANES, SAMPLES)} sessions at once.`,
  );
  const span = (w: WakeSummary): string => `${f(w.min)}..${f(w.max)}`;
  out.push(
    `          min..max (ms): ours ${span(oursWake)}; SDK poll ${SDK_POLL_MS} ms ${span(sdkWake)}; SDK poll ${TUNED_POLL_MS} ms ${span(tunedWake)}.`,
  );
  const dropped = oursWake.notBlocked + sdkWake.notBlocked + tunedWake.notBlocked;
  if (dropped > 0) {
    out.push(
      `          dropped (tasks/result sent after the work ended): ours ${oursWake.notBlocked}, SDK ${sdkWake.notBlocked} + ${tunedWake.notBlocked}.`,
    );
  }
  out.push(
    `creation: task-augmented tools/call sleep {ms: 0} (2025-11-25: params.task, ttl ${TASK_TTL_MS / 1000} s; 2026-07-28: the tasks extension declared, answered at once: inlineWaitMs 0),`,
  );
  out.push(
    `          from a separate client process (node:http, keep-alive, bodies built as strings); ${CONCURRENCY} in flight, the 2025-11-25 ones over ${CLIENTS} sessions;`,
  );
  out.push(
    `          ${DURATION_MS / 1000} s per server and era after ${WARMUP_MS} ms warm-up, in ${ROUNDS} rounds rotating between them. Then tasks/get of those tasks, the same way.`,
  );
  const perRound = (t: Throughput): string => t.roundRates.map((r) => f(r, 0)).join(" ");
  out.push(
    `          creations per second per round: ours ${perRound(oursCreate)}; ours 2026 ${perRound(modernCreate)}; SDK ${perRound(sdkCreate)}.`,
  );
  out.push(
    `          tasks/get per second per round: ours ${perRound(oursGet)}; ours 2026 ${perRound(modernGet)}; SDK ${perRound(sdkGet)}.`,
  );
  out.push("          server CPU: this process's CPU time over the rounds / requests answered (the idle server's share is nil).");
  const client = (t: Throughput): string => f(t.clientCpuUs, 0);
  out.push(
    `          the client's own CPU per request (µs): creation ${client(oursCreate)} / ${client(modernCreate)} / ${client(sdkCreate)}, tasks/get ${client(oursGet)} / ${client(modernGet)} / ${client(sdkGet)} (ours / ours 2026 / SDK).`,
  );
  out.push(
    `list:     ${LIST_TASKS} completed tasks of one session, put into each fresh server's own store; median of 3 walks; each server's own page size.`,
  );
  out.push("ping:     client.ping() round trip, answered by the SDK's own Server code in both; what any message costs on this machine.");
  out.push(`ratios:   ours/SDK; below 1 is better for times, above 1 for throughput. Whole run ${f((now() - began) / 1000, 1)} s.`);
  if (flags.charts !== "-") {
    const dir = resolve(flags.charts);
    mkdirSync(dir, { recursive: true });
    const load = `load average ${here.load.split(" ")[0]}`;
    writeFileSync(
      join(dir, "receiver-wake-up.svg"),
      distributionChartSvg({
        title: `tasks/result wake-up: work ends -> client holds the answer (${SAMPLES} samples each, ${load})`,
        xLabel: "latency (ms, log scale)",
        series: [
          { label: "ours (SQLite, event-driven)", samples: oursWake.latencies },
          { label: `SDK, pollInterval ${TUNED_POLL_MS} ms`, samples: tunedWake.latencies },
          { label: `SDK, pollInterval ${SDK_POLL_MS} ms`, samples: sdkWake.latencies },
        ],
        reference: { x: 2, label: "2 ms" },
      }),
    );
    writeFileSync(
      join(dir, "receiver-creation.svg"),
      distributionChartSvg({
        title: `task creation round trip, ${CONCURRENCY} in flight, raw HTTP client (${load})`,
        xLabel: "latency (ms, log scale)",
        series: [
          { label: "ours 2025-11-25 (SQLite)", samples: oursCreate.latencies },
          { label: "ours 2026-07-28 (SQLite)", samples: modernCreate.latencies },
          { label: "SDK (in memory)", samples: sdkCreate.latencies },
        ],
      }),
    );
    out.push(`charts:   ${join(flags.charts, "receiver-wake-up.svg")}, ${join(flags.charts, "receiver-creation.svg")}`);
  }
  console.log(out.join("\n"));
}

runBench(main, "bench");
