/**
 * `npm run bench:tracing`: what tracing costs the process users run. Two `node bin/mcp-tasks.js
 * serve --demo` (the compiled CLI, each on its own SQLite file) side by side: one with tracing off
 * (no OTEL_* variable: the SDK is never loaded), one exporting every span over OTLP/HTTP
 * (protobuf, the SDK's batch processor, default parent-based always-on sampler) to the test
 * collector (test/support/otlp) in this process, which decodes every span as a collector would.
 * The raw keep-alive client (bench/support/raw-load.ts, a process of its own) creates tasks
 * (`tools/call sleep {ms:0}` as a task, 2025-11-25) at a fixed concurrency, alternating the two
 * servers round by round so a drift of the machine's load favours neither; each created task is
 * two spans (the tools/call and its execution).
 *
 * Needs dist/ (`npm run build`; `--build` runs it first). Flags: `npm run bench:tracing -- --help`.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { OtlpReceiver } from "../test/support/otlp/otlp-receiver.js";
import { exitOnHelp, numberFlag, runBench } from "./support/command-line.js";
import { machine } from "./support/machine.js";
import { cpuOf } from "./support/process-cpu.js";
import { RawLoad } from "./support/raw-load.js";
import { percentile } from "./support/stats.js";
import { NO_CALLER_LIMITS } from "./support/no-caller-limits.js";

const HELP = `Usage: npm run bench:tracing -- [flags]
  --duration S       recorded seconds per server, split over the rounds (default 12), after a 1 s warm-up
  --rounds N         alternating rounds (default 6)
  --concurrency N    requests in flight (default 50)
  --build            run \`npm run build\` first (default: only when dist/ is missing)
  --help`;

const { values: flags } = parseArgs({
  options: {
    duration: { type: "string", default: "12" },
    rounds: { type: "string", default: "6" },
    concurrency: { type: "string", default: "50" },
    build: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});
exitOnHelp(HELP, flags.help);
const DURATION_MS = numberFlag(HELP, "duration", flags.duration, { min: 1, whole: false }) * 1000;
const ROUNDS = numberFlag(HELP, "rounds", flags.rounds, { min: 1 });
const CONCURRENCY = numberFlag(HELP, "concurrency", flags.concurrency, { min: 1, max: 1000 });

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const WARM_UP_MS = 1000;

interface Server {
  label: string;
  process: ChildProcess;
  url: string;
  count: number;
  ms: number;
  latencies: number[];
  cpuMs: number;
}

/** Spawns the compiled CLI's serve and resolves once it logs its URL. */
function startServer(label: string, store: string, env: Record<string, string>): Promise<Server> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["bin/mcp-tasks.js", "serve", "--demo", "--port", "0", "--store", store, "--no-web", ...NO_CALLER_LIMITS],
      {
        cwd: ROOT,
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, PORT: "0", ...env },
      },
    );
    let seen = "";
    const timer = setTimeout(() => reject(new Error(`${label}: not listening after 60 s:\n${seen.slice(-2000)}`)), 60_000);
    const onData = (chunk: Buffer): void => {
      if (seen.length > 100_000) return;
      seen += chunk.toString("utf8");
      const url = /listening on (http:\/\/[^\s"]+)/.exec(seen)?.[1];
      if (url !== undefined) {
        clearTimeout(timer);
        resolve({ label, process: child, url, count: 0, ms: 0, latencies: [], cpuMs: 0 });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited ${code}:\n${seen.slice(-2000)}`));
    });
  });
}

const fixed = (n: number, digits = 1): string => (Number.isFinite(n) ? n.toFixed(digits) : "–");
const rateOf = (s: Server): number => s.count / (s.ms / 1000);

async function main(): Promise<void> {
  const m = machine();
  console.log(`bench:tracing on ${m.cores} cores (${m.model}), ${m.os}, node ${m.node}, load avg ${m.load}`);
  console.log(`${CONCURRENCY} in flight; ${ROUNDS} alternating rounds of ${fixed(DURATION_MS / ROUNDS / 1000, 2)} s per server`);
  if (flags.build || !existsSync(join(ROOT, "dist", "cli", "main.js"))) {
    console.log("building dist/ (npm run build)…");
    execFileSync("npm", ["run", "build", "--silent"], { cwd: ROOT, stdio: "inherit" });
  }
  const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-bench-tracing-"));
  const receiver = await OtlpReceiver.start();
  const servers: Server[] = [];
  const loads: RawLoad[] = [];
  try {
    const off = await startServer("tracing off", `sqlite:${join(dir, "off.db")}`, {});
    servers.push(off);
    // The exporter's defaults but the service name: a batch every 5 s (OTEL_BSP_SCHEDULE_DELAY), 512 spans at most per batch.
    const on = await startServer("tracing on, OTLP/HTTP protobuf", `sqlite:${join(dir, "on.db")}`, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_SERVICE_NAME: "bench-tracing",
    });
    servers.push(on);
    const lanes = await Promise.all(
      servers.map(async (server) => {
        const load = await RawLoad.open({ url: server.url, era: "2025-11-25", concurrency: CONCURRENCY, sessions: 1, ttlMs: 600_000 });
        loads.push(load);
        return { server, load };
      }),
    );
    for (const lane of lanes) await lane.load.run("create", WARM_UP_MS, false);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? lanes : [...lanes].reverse();
      for (const { server, load } of order) {
        const before = cpuOf(server.process.pid ?? 0);
        const ran = await load.run("create", DURATION_MS / ROUNDS, true);
        const after = cpuOf(server.process.pid ?? 0);
        server.count += ran.count;
        server.ms += DURATION_MS / ROUNDS;
        server.latencies.push(...ran.latencies);
        if (before !== null && after !== null) server.cpuMs += after - before;
      }
    }
    // What was exported by now (the last batch may still be on its way): the exporter was really on.
    await new Promise((resolve) => setTimeout(resolve, 6000));
    console.log("task creation (tools/call as a task, 2025-11-25, 1 session)");
    for (const server of servers) {
      const sorted = [...server.latencies].sort((a, b) => a - b);
      console.log(
        `  ${server.label.padEnd(34)} ${fixed(rateOf(server), 0).padStart(6)}/s   p50 ${fixed(percentile(sorted, 50), 2).padStart(6)}  p99 ${fixed(percentile(sorted, 99), 2).padStart(6)} ms   server CPU ${fixed((server.cpuMs * 1000) / server.count, 0).padStart(5)} µs/task`,
      );
    }
    const spans = receiver.spans.items.length;
    console.log(
      `spans received by the collector: ${spans} (${fixed(spans / Math.max(on.count, 1), 2)} per task created with tracing on); decode failures: ${receiver.failures.length}`,
    );
    console.log(`creation throughput, on / off: ${fixed(rateOf(on) / rateOf(off), 3)} (target ≥ 0.80)`);
    console.log(`load avg at the end: ${machine().load}`);
  } finally {
    await Promise.all(loads.map((load) => load.close().catch(() => {})));
    await Promise.all(
      servers.map(async (server) => {
        const gone = new Promise((resolve) => server.process.once("exit", resolve));
        server.process.kill("SIGKILL");
        await gone;
      }),
    );
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main, "bench:tracing");
