/**
 * `npm run bench:serve`: the process users run. `node bin/mcp-tasks.js serve --demo` (the compiled
 * CLI, as installed: audit log, metrics and web view on, its log on a file as a deployment would
 * keep it) against the SDK baseline (bench/sdk-baseline-server.ts) in a process of its own, both
 * driven over loopback by the raw keep-alive client in a third process (bench/support/raw-load.ts).
 * Per-caller limits are lifted for the measurement (rate limit, active and stored task caps,
 * sessions per client): they are what a single load client would otherwise trip, not a cost.
 *
 *   1. creation (`tools/call sleep {ms:0}` as a task) and `tasks/get`, per second at a fixed
 *      concurrency, with one session and with several (2025-11-25), and stateless (2026-07-28,
 *      ours only: the SDK serves no 2026-07-28); rounds rotate the servers so all see the same load.
 *      Each line prints p50/p95/p99 round trips and the server and client processes' CPU per
 *      request. A floor runs in the same rounds (bench/support/bare-http-process.ts: bare
 *      node:http, canned answers of the same size): what any server pays per request here.
 *      Then the rate ratios, the server-CPU ratios and the cores each server kept busy.
 *   2. tasks/result wake-up with `--wake-lanes` waiters at once (2025-11-25): from the task's
 *      terminal lastUpdatedAt (the server's stamp) to the client holding the result; once
 *      without the session's GET stream, once with it open, as the SDK's client keeps it.
 *
 * `--against DIR` runs the same command from another checkout's dist/ in the same rounds, so two
 * builds are compared under the same drift of the machine; `--ops` picks what is measured.
 *
 * Needs dist/ (`npm run build`; `--build` runs it first). Flags: `npm run bench:serve -- --help`.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { exitOnHelp, numberFlag, runBench } from "./support/command-line.js";
import { machine } from "./support/machine.js";
import { cpuOf, mainThreadCpuOf } from "./support/process-cpu.js";
import { RawLoad, type LoadEra, type LoadOp } from "./support/raw-load.js";
import { percentile } from "./support/stats.js";
import { NO_CALLER_LIMITS } from "./support/no-caller-limits.js";

const HELP = `Usage: npm run bench:serve -- [flags]
  --duration S       recorded seconds per server, era, session count and operation (default 6),
                     split over the rounds, after a 0.5 s warm-up
  --rounds N         rotating rounds (default 3)
  --concurrency N    requests in flight (default 50)
  --sessions A,B     2025-11-25 session counts the in-flight requests are spread over (default 1,8)
  --wake-lanes N     tasks/result waiters at once (default 50)
  --wake-sleep-ms MS how long each wake-up sample's task works (default 50)
  --wake-duration S  seconds of wake-up samples (default 6), after a 3 s warm-up
  --ops A,B          what to measure: create, get, wake (default all three)
  --profile DIR      run our server under --cpu-prof, its profile written to DIR when it stops
  --against DIR      also measure the build in another checkout (its dist/, e.g. a git worktree of
                     an older commit) in the same rounds, and print this build ÷ that one
  --driver NAME      SQLite driver of our server: node:sqlite or better-sqlite3 (default: the
                     store's own choice, MCP_TASKS_SQLITE_DRIVER)
  --against-driver NAME  the same for the --against server; \`--against . --driver better-sqlite3
                     --against-driver node:sqlite\` compares the two drivers on one build
  --build            run \`npm run build\` first (default: only when dist/ is missing)
  --help`;

const { values: flags } = parseArgs({
  options: {
    duration: { type: "string", default: "6" },
    rounds: { type: "string", default: "3" },
    concurrency: { type: "string", default: "50" },
    sessions: { type: "string", default: "1,8" },
    "wake-lanes": { type: "string", default: "50" },
    "wake-sleep-ms": { type: "string", default: "50" },
    "wake-duration": { type: "string", default: "6" },
    ops: { type: "string", default: "create,get,wake" },
    build: { type: "boolean", default: false },
    profile: { type: "string" },
    against: { type: "string" },
    driver: { type: "string" },
    "against-driver": { type: "string" },
    help: { type: "boolean", default: false },
  },
});
exitOnHelp(HELP, flags.help);
const DURATION_MS = numberFlag(HELP, "duration", flags.duration, { min: 1, whole: false }) * 1000;
const ROUNDS = numberFlag(HELP, "rounds", flags.rounds, { min: 1 });
const CONCURRENCY = numberFlag(HELP, "concurrency", flags.concurrency, { min: 1, max: 1000 });
const SESSIONS = flags.sessions.split(",").map((raw) => numberFlag(HELP, "sessions", raw.trim(), { min: 1, max: 1000 }));
const WAKE_LANES = numberFlag(HELP, "wake-lanes", flags["wake-lanes"], { min: 1, max: 1000 });
const WAKE_SLEEP_MS = numberFlag(HELP, "wake-sleep-ms", flags["wake-sleep-ms"], { min: 0 });
const WAKE_DURATION_MS = numberFlag(HELP, "wake-duration", flags["wake-duration"], { min: 1, whole: false }) * 1000;
const OPS = new Set(flags.ops.split(",").map((raw) => raw.trim()));
for (const op of OPS) {
  if (["create", "get", "wake"].includes(op)) continue;
  console.error(`--ops: "${op}" is none of create, get, wake\n\n${HELP}`);
  process.exit(2);
}
const RATE_OPS = (["create", "get"] as const).filter((op) => OPS.has(op));

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const WARM_UP_MS = 500;
/**
 * The wake-up's warm-up is longer: a waiter without the GET stream goes through the SDK's SSE
 * transport, which half a second does not warm. With 0.5 s, whichever build ran first in a paired
 * run had a p99 two to three times the other's, in both orders.
 */
const WAKE_WARM_UP_MS = 3000;
const TTL_MS = 600_000;

/** 2026-07-28: answer every call with its task at once, as 2025-11-25 does for `params.task` (the server would otherwise wait up to 250 ms for a quick result). */
const TASK_AT_ONCE = ["--inline-wait-ms", "0"];

interface Server {
  name: string;
  process: ChildProcess;
  url: string;
}

/** Spawns `command` and resolves with the URL of its "listening on http://…" line. */
function startServer(name: string, command: string[], logFile: string, driver?: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0] as string, command.slice(1), {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        MCP_TASKS_LOG_FORMAT: "json",
        PORT: "0",
        ...(driver === undefined ? {} : { MCP_TASKS_SQLITE_DRIVER: driver }),
      },
    });
    const log = createWriteStream(logFile);
    let seen = "";
    let listening = false;
    const timer = setTimeout(() => reject(new Error(`${name}: not listening after 60 s:\n${seen.slice(-2000)}`)), 60_000);
    const onData = (chunk: Buffer): void => {
      log.write(chunk);
      if (listening) return;
      seen += chunk.toString("utf8");
      const url = /listening on (http:\/\/[^\s"]+)/.exec(seen)?.[1];
      if (url !== undefined) {
        listening = true;
        clearTimeout(timer);
        resolve({ name, process: child, url });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited ${code}:\n${seen.slice(-2000)}`));
    });
  });
}

interface Tally {
  count: number;
  ms: number;
  latencies: number[];
  serverCpuMs: number;
  /** The server's main thread's share of {@link serverCpuMs}. */
  mainThreadCpuMs: number;
  clientCpuMs: number;
}

const tally = (): Tally => ({ count: 0, ms: 0, latencies: [], serverCpuMs: 0, mainThreadCpuMs: 0, clientCpuMs: 0 });

interface Lane {
  label: string;
  server: Server;
  era: LoadEra;
  sessions: number;
  load: RawLoad;
  create: Tally;
  get: Tally;
}

async function measure(lane: Lane, op: LoadOp, ms: number, into: Tally): Promise<void> {
  const pid = lane.server.process.pid;
  const before = cpuOf(pid);
  const mainBefore = mainThreadCpuOf(pid);
  const round = await lane.load.run(op, ms, true);
  const after = cpuOf(pid);
  const mainAfter = mainThreadCpuOf(pid);
  into.count += round.count;
  into.ms += ms;
  into.latencies.push(...round.latencies);
  into.clientCpuMs += round.clientCpuMs;
  if (before !== null && after !== null) into.serverCpuMs += after - before;
  if (mainBefore !== null && mainAfter !== null) into.mainThreadCpuMs += mainAfter - mainBefore;
}

const fixed = (n: number, digits = 1): string => (Number.isFinite(n) ? n.toFixed(digits) : "–");

function line(label: string, t: Tally): string {
  const sorted = [...t.latencies].sort((a, b) => a - b);
  const rate = t.count / (t.ms / 1000);
  const cpuUs = (t.serverCpuMs * 1000) / t.count;
  return `  ${label.padEnd(44)} ${fixed(rate, 0).padStart(7)}/s   p50 ${fixed(percentile(sorted, 50), 2).padStart(6)}  p95 ${fixed(percentile(sorted, 95), 2).padStart(6)}  p99 ${fixed(percentile(sorted, 99), 2).padStart(6)} ms   server CPU ${fixed(cpuUs, 0).padStart(5)} µs/req (main thread ${fixed((t.mainThreadCpuMs * 1000) / t.count, 0).padStart(4)}), client ${fixed((t.clientCpuMs * 1000) / t.count, 0).padStart(4)}`;
}

const rateOf = (t: Tally): number => t.count / (t.ms / 1000);

async function main(): Promise<void> {
  const m = machine();
  console.log(`bench:serve on ${m.cores} cores (${m.model}), ${m.os}, node ${m.node}, load avg ${m.load}`);
  console.log(`${CONCURRENCY} in flight; ${ROUNDS} rotating rounds of ${fixed(DURATION_MS / ROUNDS / 1000, 2)} s per line and operation`);
  if (flags.build || !existsSync(join(ROOT, "dist", "cli", "main.js"))) {
    console.log("building dist/ (npm run build)…");
    execFileSync("npm", ["run", "build", "--silent"], { cwd: ROOT, stdio: "inherit" });
  }
  const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-bench-serve-"));
  const servers: Server[] = [];
  const loads: RawLoad[] = [];
  try {
    const ours = await startServer(
      "mcp-tasks serve",
      [
        process.execPath,
        ...(flags.profile ? ["--cpu-prof", "--cpu-prof-dir", flags.profile] : []),
        "bin/mcp-tasks.js",
        "serve",
        "--demo",
        "--port",
        "0",
        "--store",
        `sqlite:${join(dir, "bench.db")}`,
        ...NO_CALLER_LIMITS,
        ...TASK_AT_ONCE,
      ],
      join(dir, "serve.log"),
      flags.driver,
    );
    servers.push(ours);
    const AGAINST = flags.against === undefined ? null : resolve(flags.against);
    if (AGAINST !== null && !existsSync(join(AGAINST, "dist", "cli", "main.js"))) {
      throw new Error(
        `--against ${flags.against}: no build there (${join(AGAINST, "dist", "cli", "main.js")} is missing; run npm run build in it)`,
      );
    }
    const other =
      AGAINST === null
        ? null
        : await startServer(
            "mcp-tasks serve (against)",
            [
              process.execPath,
              join(AGAINST, "bin", "mcp-tasks.js"),
              "serve",
              "--demo",
              "--port",
              "0",
              "--store",
              `sqlite:${join(dir, "against.db")}`,
              ...NO_CALLER_LIMITS,
              ...TASK_AT_ONCE,
            ],
            join(dir, "against.log"),
            flags["against-driver"],
          );
    if (other) {
      servers.push(other);
      console.log(`against: the same command in ${AGAINST} (pid ${other.process.pid})`);
    }
    if (flags.driver !== undefined || flags["against-driver"] !== undefined) {
      console.log(`SQLite driver: ours ${flags.driver ?? "default"}, against ${flags["against-driver"] ?? "default"}`);
    }
    const floor = await startServer(
      "bare node:http",
      [process.execPath, "--import", "tsx", "bench/support/bare-http-process.ts"],
      join(dir, "floor.log"),
    );
    servers.push(floor);
    const sdk = await startServer(
      "SDK baseline",
      [process.execPath, "--import", "tsx", "bench/support/sdk-baseline-process.ts"],
      join(dir, "sdk.log"),
    );
    servers.push(sdk);
    console.log(
      `ours: node bin/mcp-tasks.js serve --demo ${[...NO_CALLER_LIMITS, ...TASK_AT_ONCE].join(" ")} (pid ${ours.process.pid}, log ${join(dir, "serve.log")})`,
    );
    console.log(`SDK:  @modelcontextprotocol/sdk McpServer + experimental tasks, InMemoryTaskStore, node:http (pid ${sdk.process.pid})`);
    console.log(
      `floor: bare node:http answering canned JSON-RPC answers of the same size, nothing stored or checked (pid ${floor.process.pid})\n`,
    );

    const lanes: Lane[] = [];
    const open = async (label: string, server: Server, era: LoadEra, sessions: number): Promise<void> => {
      const load = await RawLoad.open({ url: server.url, era, concurrency: CONCURRENCY, sessions, ttlMs: TTL_MS });
      loads.push(load);
      lanes.push({ label, server, era, sessions, load, create: tally(), get: tally() });
    };
    for (const sessions of SESSIONS) {
      await open(`mcp-tasks serve, 2025-11-25, ${sessions} session(s)`, ours, "2025-11-25", sessions);
      await open(`SDK, 2025-11-25, ${sessions} session(s)`, sdk, "2025-11-25", sessions);
      if (other) await open(`against, 2025-11-25, ${sessions} session(s)`, other, "2025-11-25", sessions);
    }
    await open("mcp-tasks serve, 2026-07-28, stateless", ours, "2026-07-28", 1);
    await open("floor: bare node:http, 1 session", floor, "2025-11-25", 1);

    // tasks/get reads tasks the lane created: without a creation round, a warm-up one makes them.
    if (OPS.has("get") && !OPS.has("create")) for (const lane of lanes) await lane.load.run("create", WARM_UP_MS, false);
    for (const op of RATE_OPS) {
      for (const lane of lanes) await lane.load.run(op, WARM_UP_MS, false);
      for (let round = 0; round < ROUNDS; round++) {
        // Rotate who goes first, so a drift of the machine's load does not favour one server.
        const order = lanes.map((_, i) => lanes[(i + round) % lanes.length]!);
        for (const lane of order) await measure(lane, op, DURATION_MS / ROUNDS, lane[op]);
      }
    }

    for (const op of RATE_OPS) {
      console.log(op === "create" ? "task creation (tools/call as a task)" : "tasks/get");
      for (const lane of lanes) console.log(line(lane.label, lane[op]));
    }
    if (RATE_OPS.length > 0) console.log("\nratios, ours / SDK (same sessions, same run):");
    for (const sessions of RATE_OPS.length > 0 ? SESSIONS : []) {
      const mine = lanes.find((l) => l.server === ours && l.era === "2025-11-25" && l.sessions === sessions)!;
      const theirs = lanes.find((l) => l.server === sdk && l.sessions === sessions)!;
      const stateless = lanes.find((l) => l.era === "2026-07-28")!;
      const ratio = (op: "create" | "get", lane: Lane): string => (OPS.has(op) ? fixed(rateOf(lane[op]) / rateOf(theirs[op]), 2) : "–");
      console.log(
        `  ${sessions} session(s): creation ${ratio("create", mine)}× (2026-07-28: ${ratio("create", stateless)}×; target ≥ 2.5×), tasks/get ${ratio("get", mine)}× (2026-07-28: ${ratio("get", stateless)}×; target ≥ 4×)`,
      );
      const bare = lanes.find((l) => l.server === floor)!;
      const cpu = (op: "create" | "get", lane: Lane): number => lane[op].serverCpuMs / lane[op].count;
      const ceiling = (op: "create" | "get"): string =>
        OPS.has(op)
          ? `${fixed(cpu(op, theirs) / cpu(op, bare), 2)}× (ours spends ${fixed((cpu(op, mine) - cpu(op, bare)) * 1000, 0)} µs above the floor)`
          : "–";
      console.log(
        `    most any server could reach, the SDK's server CPU ÷ the floor's: creation ${ceiling("create")}, tasks/get ${ceiling("get")}`,
      );
      // A rate is bound by the server's main thread; its CPU per request also counts the work its
      // process does off that thread (V8's helper threads: garbage collection, compilation), so the
      // two ratios differ.
      const cheaper = (op: "create" | "get"): string => (OPS.has(op) ? `${fixed(cpu(op, theirs) / cpu(op, mine), 2)}×` : "–");
      const cores = (op: "create" | "get"): string =>
        OPS.has(op)
          ? `${fixed((rateOf(mine[op]) * cpu(op, mine)) / 1000, 2)} / ${fixed((rateOf(theirs[op]) * cpu(op, theirs)) / 1000, 2)}`
          : "–";
      console.log(
        `    server CPU per request, the SDK's ÷ ours: creation ${cheaper("create")}, tasks/get ${cheaper("get")}; cores busy at those rates, ours / SDK: creation ${cores("create")}, tasks/get ${cores("get")}`,
      );
      // The rate each server would reach with a core of its own is 1 ÷ its main thread's CPU per
      // request; on a machine shared with the load client the measured rates come near it.
      const mainCpu = (op: "create" | "get", lane: Lane): number => lane[op].mainThreadCpuMs / lane[op].count;
      const mainRatio = (op: "create" | "get"): string =>
        OPS.has(op)
          ? `${fixed(mainCpu(op, theirs) / mainCpu(op, mine), 2)}× (${fixed(mainCpu(op, mine) * 1000, 0)} µs against ${fixed(mainCpu(op, theirs) * 1000, 0)})`
          : "–";
      console.log(
        `    main-thread CPU per request, the SDK's ÷ ours (the rate ratio with a core each): creation ${mainRatio("create")}, tasks/get ${mainRatio("get")}`,
      );
      const then = lanes.find((l) => l.server === other && l.sessions === sessions);
      if (then) {
        const versus = (op: "create" | "get"): string =>
          OPS.has(op)
            ? `${fixed(rateOf(mine[op]) / rateOf(then[op]), 2)}× the rate, ${fixed(cpu(op, mine) / cpu(op, then), 2)}× the server CPU`
            : "–";
        console.log(`    this build ÷ against: creation ${versus("create")}; tasks/get ${versus("get")}`);
      }
    }

    // Without the session's GET stream, a waiting tasks/result carries its task's notifications on
    // a stream of its own; with it open (the SDK client keeps one), the answer comes as plain JSON.
    for (const [target, standaloneStreams] of OPS.has("wake")
      ? [ours, other].flatMap((server) => (server ? [[server, false] as const, [server, true] as const] : []))
      : []) {
      const waker = await RawLoad.open({
        url: target.url,
        era: "2025-11-25",
        concurrency: WAKE_LANES,
        sessions: 1,
        ttlMs: TTL_MS,
        wakeSleepMs: WAKE_SLEEP_MS,
        standaloneStreams,
      });
      loads.push(waker);
      await waker.run("wake", WAKE_WARM_UP_MS, false);
      const cpuBefore = cpuOf(target.process.pid);
      const woken = await waker.run("wake", WAKE_DURATION_MS, true);
      const cpuAfter = cpuOf(target.process.pid);
      const cycleCpu =
        cpuBefore !== null && cpuAfter !== null
          ? `, server CPU ${fixed(((cpuAfter - cpuBefore) * 1000) / woken.latencies.length, 0)} µs per creation + wait`
          : "";
      const sorted = [...woken.latencies].sort((a, b) => a - b);
      console.log(
        `${standaloneStreams ? "" : "\n"}${target === other ? "against: " : ""}tasks/result wake-up, ${WAKE_LANES} waiters at once, sleep ${WAKE_SLEEP_MS} ms, ${standaloneStreams ? "the session's GET stream open   " : "no GET stream (result on a stream)"} (${sorted.length} samples): p50 ${fixed(percentile(sorted, 50), 2)} ms, p95 ${fixed(percentile(sorted, 95), 2)} ms, p99 ${fixed(percentile(sorted, 99), 2)} ms (targets: p50 ≤ 3 ms, p99 ≤ 10 ms)${cycleCpu}`,
      );
    }
    console.log(`load avg at the end: ${machine().load}`);
  } finally {
    await Promise.all(loads.map((load) => load.close().catch(() => {})));
    // A profiled server stops in order (SIGTERM drains, then node writes the profile); the rest die.
    await Promise.all(
      servers.map(async (server) => {
        const gone = new Promise((resolve) => server.process.once("exit", resolve));
        server.process.kill(flags.profile && server.name === "mcp-tasks serve" ? "SIGTERM" : "SIGKILL");
        await gone;
      }),
    );
    rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main, "bench:serve");
