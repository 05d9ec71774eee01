/**
 * `npm run bench:waiters`: what a waiting request costs the process users run, in memory. A real
 * `mcp-tasks serve --demo` (dist/ when built, else the sources through tsx) is given tasks that
 * run for an hour, then one waiter per task, each on a connection of its own, held open:
 *
 *   - 2025-11-25: a `tasks/result` POST over one of a few sessions, answered (later) on an SSE
 *     stream — once with the sessions' GET streams closed, once with them open (the SDK's client
 *     keeps one per session, and the answer then comes as plain JSON);
 *   - 2026-07-28: a `subscriptions/listen` stream following the task (the era's way to wait).
 *
 * The server's memory is read after two full garbage collections (`--expose-gc` and a preload
 * that, on SIGUSR2, collects and prints `process.memoryUsage()`: bench/support/heap-on-signal.mjs),
 * before the waiters and with all of them waiting; the difference divided by their number is the
 * cost of one waiter: V8 heap, and RSS (heap, buffers, sockets, the kernel's share aside).
 *
 * Flags: `npm run bench:waiters -- --help`.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { request, type ClientRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { exitOnHelp, numberFlag, runBench } from "./support/command-line.js";
import { GcReadableProcess, type Memory } from "./support/gc-readable-process.js";
import { machine } from "./support/machine.js";
import { NO_CALLER_LIMITS } from "./support/no-caller-limits.js";
import { openSession, RawRpc, taskIdIn } from "./support/raw-rpc.js";

const HELP = `Usage: npm run bench:waiters -- [flags]
  --waiters N    waiting requests per line (default 2000)
  --sessions N   2025-11-25 sessions the waiters are spread over (default 10)
  --lines A,B    what to measure: 2025, 2025-get-stream, 2026, floor (default all four)
  --sources      run the server from the sources (tsx) even when dist/ is built
  --help`;

const { values: flags } = parseArgs({
  options: {
    waiters: { type: "string", default: "2000" },
    sessions: { type: "string", default: "10" },
    lines: { type: "string", default: "2025,2025-get-stream,2026,floor" },
    sources: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});
exitOnHelp(HELP, flags.help);
const WAITERS = numberFlag(HELP, "waiters", flags.waiters, { min: 1, max: 18_000 });
const SESSIONS = numberFlag(HELP, "sessions", flags.sessions, { min: 1, max: 1000 });
const LINES = flags.lines.split(",").map((raw) => raw.trim());
for (const line of LINES) {
  if (["2025", "2025-get-stream", "2026", "floor"].includes(line)) continue;
  console.error(`--lines: "${line}" is none of 2025, 2025-get-stream, 2026, floor\n\n${HELP}`);
  process.exit(2);
}

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const V2025 = "2025-11-25";
const V2026 = "2026-07-28";
const TASKS_EXT = "io.modelcontextprotocol/tasks";
const HOUR_MS = 3_600_000;

/** `mcp-tasks serve`, or with `dir` null the floor (bench/support/held-requests-floor.ts). */
function startServer(dir: string | null): Promise<GcReadableProcess> {
  const fromDist = !flags.sources && existsSync(join(ROOT, "dist", "cli", "main.js"));
  const bin = fromDist ? ["bin/mcp-tasks.js"] : ["--import", "tsx", "src/cli/main.ts"];
  const serve = [
    ...bin,
    "serve",
    "--demo",
    "--port",
    "0",
    "--store",
    `sqlite:${join(dir ?? "", "bench.db")}`,
    ...NO_CALLER_LIMITS,
    "--inline-wait-ms",
    "0",
  ];
  return GcReadableProcess.start(dir === null ? ["--import", "tsx", "bench/support/held-requests-floor.ts"] : serve);
}

/**
 * A request held open on a connection of its own; resolves once `ready` holds for what has arrived
 * of its response, or with `ready` "sent" once the request is sent.
 */
function holdOpen(
  url: string,
  body: string,
  headers: Record<string, string>,
  ready: "sent" | ((received: string) => boolean),
): Promise<ClientRequest> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent: false,
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "content-length": Buffer.byteLength(body),
          ...headers,
        },
      },
      (res) => {
        let received = "";
        let done = false;
        const check = (): void => {
          if (!done && ready !== "sent" && ready(received)) {
            done = true;
            resolve(req);
          }
        };
        res.on("data", (chunk: Buffer) => {
          if (done) return;
          received += chunk.toString("utf8");
          check();
        });
        res.on("end", () => !done && reject(new Error(`a waiter's response ended: ${res.statusCode} ${received.slice(0, 300)}`)));
        res.on("error", () => {});
        check();
      },
    );
    req.on("error", (error) => reject(error));
    if (ready === "sent") req.on("finish", () => resolve(req));
    req.end(body);
  });
}

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(new URL("/metrics", url))).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Runs `n` calls of `make`, `lanes` at a time, in order of index. */
async function inParallel<T>(n: number, lanes: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array<T>(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await make(i);
      }
    }),
  );
  return out;
}

interface Figures {
  label: string;
  before: Memory;
  after: Memory;
}

const meta2026 = `"_meta":{"io.modelcontextprotocol/protocolVersion":"${V2026}","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{"extensions":{"${TASKS_EXT}":{}}}}`;

async function measure2025(server: GcReadableProcess, standaloneStreams: boolean): Promise<Figures> {
  const rpc = new RawRpc(server.url, 16);
  const headers: Record<string, string>[] = [];
  const streams: (() => void)[] = [];
  const waiters: ClientRequest[] = [];
  try {
    for (let i = 0; i < SESSIONS; i++) headers.push({ "mcp-session-id": await openSession(rpc, V2025), "mcp-protocol-version": V2025 });
    if (standaloneStreams) for (const h of headers) streams.push(await rpc.openStandaloneStream(h));
    const ids = await inParallel(WAITERS, 16, async (i) => {
      const created = await rpc.post(
        `{"jsonrpc":"2.0","id":${i + 1},"method":"tools/call","params":{"name":"sleep","arguments":{"ms":${HOUR_MS}},"task":{"ttl":${HOUR_MS}}}}`,
        headers[i % SESSIONS]!,
      );
      const id = taskIdIn(created.text);
      if (id === "") throw new Error(`creation answered ${created.status}: ${created.text.slice(0, 300)}`);
      return id;
    });
    const before = await server.memory();
    const waiting = await metric(server.url, "mcp_tasks_results_waiting");
    for (const [i, id] of ids.entries()) {
      // What tells that a tasks/result waits is the server's gauge, below.
      waiters.push(
        await holdOpen(
          server.url,
          `{"jsonrpc":"2.0","id":${i + 1},"method":"tasks/result","params":{"taskId":"${id}"}}`,
          headers[i % SESSIONS]!,
          "sent",
        ),
      );
    }
    await until(
      `${WAITERS} tasks/result waiting`,
      async () => (await metric(server.url, "mcp_tasks_results_waiting")) >= waiting + WAITERS,
    );
    const after = await server.memory();
    return {
      label: `2025-11-25 tasks/result, ${SESSIONS} sessions, ${standaloneStreams ? "their GET streams open (answer as JSON)" : "no GET stream (answer on an SSE stream)"}`,
      before,
      after,
    };
  } finally {
    for (const waiter of waiters) waiter.destroy();
    for (const close of streams) close();
    rpc.close();
  }
}

async function measure2026(server: GcReadableProcess): Promise<Figures> {
  const rpc = new RawRpc(server.url, 16);
  const headers = { "mcp-protocol-version": V2026 };
  const waiters: ClientRequest[] = [];
  try {
    const ids = await inParallel(WAITERS, 16, async (i) => {
      const created = await rpc.post(
        `{"jsonrpc":"2.0","id":${i + 1},"method":"tools/call","params":{"name":"sleep","arguments":{"ms":${HOUR_MS}},"task":{"ttl":${HOUR_MS}},${meta2026}}}`,
        { ...headers, "mcp-method": "tools/call", "mcp-name": "sleep" },
      );
      const id = taskIdIn(created.text);
      if (id === "") throw new Error(`creation answered ${created.status}: ${created.text.slice(0, 300)}`);
      return id;
    });
    const before = await server.memory();
    for (const [i, id] of ids.entries()) {
      const body = `{"jsonrpc":"2.0","id":${i + 1},"method":"subscriptions/listen","params":{"notifications":{"taskIds":["${id}"]},${meta2026}}}`;
      // Waiting once the task's first notifications/tasks (its state now) has come.
      waiters.push(
        await holdOpen(server.url, body, { ...headers, "mcp-method": "subscriptions/listen" }, (received) =>
          received.includes('"notifications/tasks"'),
        ),
      );
    }
    const after = await server.memory();
    return { label: "2026-07-28 subscriptions/listen, one task each", before, after };
  } finally {
    for (const waiter of waiters) waiter.destroy();
    rpc.close();
  }
}

async function measureFloor(server: GcReadableProcess): Promise<Figures> {
  const waiters: ClientRequest[] = [];
  try {
    const before = await server.memory();
    for (let i = 0; i < WAITERS; i++) {
      waiters.push(
        await holdOpen(
          server.url,
          `{"jsonrpc":"2.0","id":${i + 1},"method":"tasks/result","params":{"taskId":"${i}"}}`,
          { "mcp-protocol-version": V2025 },
          () => true,
        ),
      );
    }
    const after = await server.memory();
    return { label: "floor: bare node:http holding the request open (SSE head sent)", before, after };
  } finally {
    for (const waiter of waiters) waiter.destroy();
  }
}

const kb = (bytes: number): string => (bytes / 1024).toFixed(1);

async function main(): Promise<void> {
  const m = machine();
  console.log(`bench:waiters on ${m.cores} cores (${m.model}), ${m.os}, node ${m.node}, load avg ${m.load}`);
  console.log(`${WAITERS} waiters per line, each on a connection of its own; memory read after two full collections\n`);
  const rows: Figures[] = [];
  for (const line of LINES) {
    // A server per line: what one line leaves behind is not charged to the next.
    const dir = line === "floor" ? null : mkdtempSync(join(tmpdir(), "mcp-tasks-bench-waiters-"));
    const server = await startServer(dir);
    try {
      if (line === "floor") rows.push(await measureFloor(server));
      else rows.push(line === "2026" ? await measure2026(server) : await measure2025(server, line === "2025-get-stream"));
    } finally {
      await server.stop();
      if (dir !== null) rmSync(dir, { recursive: true, force: true });
    }
  }
  console.log(
    `\n${"waiters".padEnd(76)} ${"heap KB/waiter".padStart(14)} ${"RSS KB/waiter".padStart(14)} ${"heap MB before → with".padStart(22)}`,
  );
  for (const { label, before, after } of rows) {
    const heap = (after.heapUsed + after.external - before.heapUsed - before.external) / WAITERS;
    const rss = (after.rss - before.rss) / WAITERS;
    console.log(
      `${label.padEnd(76)} ${kb(heap).padStart(14)} ${kb(rss).padStart(14)} ${`${(before.heapUsed / 2 ** 20).toFixed(1)} → ${(after.heapUsed / 2 ** 20).toFixed(1)}`.padStart(22)}`,
    );
  }
}

runBench(main, "bench:waiters");
