/**
 * A drain with many parked tasks, on real `mcp-tasks serve --demo --workers 8` processes and a
 * SQLite file (docs/durable-execution.md, Parking; docs/deployment.md, Draining): N tasks parked
 * (approvals waiting for their event, naps whose time comes after the stop) and R `sleep` tasks
 * running, then SIGTERM. Reports how long the process took to exit, how many parked rows the drain
 * rewrote, and — after the next start, the approvals' events emitted and the naps' time come — how
 * long until every parked task completed. Used by test/e2e/drain-parked.test.ts and
 * `npm run bench:drain` (bench/drain.ts, the full 1,000).
 *
 * Tasks are created and events emitted over HTTP as a requestor would (2026-07-28 requests, no
 * session); the file is read read-only, which costs the server nothing.
 */
import { join } from "node:path";
import Database from "better-sqlite3";
import { CliProcess, type Exit } from "./cli-process.js";

export interface ParkedDrainOptions {
  /** A fresh directory for the SQLite file. */
  dir: string;
  /** Parked tasks: two thirds approvals, one third naps. */
  parked: number;
  /** `sleep` tasks running at the SIGTERM (at most `workers`). */
  running: number;
  /** How long each running sleep lasts (ms); the drain's grace is far longer. */
  runMs: number;
  /** The drain's grace period (`--drain-timeout`). */
  graceMs: number;
  /** How long after their creation the naps' time comes: after the process has exited. */
  napLeadMs: number;
  workers?: number;
}

export interface ParkedDrainReport {
  /** Parked rows (task, its history, its waits) as the file held them before the SIGTERM and after the exit. */
  parkedBefore: number;
  /** Parked tasks whose row, history or waits differ after the exit. */
  parkedRewritten: number;
  /** Parked tasks still parked after the exit. */
  parkedAfter: number;
  /** How the process exited, and how long after the SIGTERM. */
  exit: Exit;
  exitMs: number;
  /** The running sleeps completed by the drain (from the file). */
  runningCompleted: number;
  /** What the drain logged: how many handlers it waited for, and the tasks it handed back. */
  drainingRunning: unknown;
  handedBack: string[];
  /** When the earliest nap was due, relative to the exit (ms; positive: after it). */
  napsDueAfterExitMs: number;
  /** After the next start: the approvals an emit woke, and the time until all parked tasks completed. */
  woken: number;
  resumedMs: number;
  completedAfter: number;
  creationMs: number;
}

const V2026 = "2026-07-28";
const META = `"_meta":{"io.modelcontextprotocol/protocolVersion":"${V2026}","io.modelcontextprotocol/clientInfo":{"name":"parked-drain","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`;
const CONCURRENCY = 16;
/** The per-caller limits a load of thousands of requests from one client would trip. */
const NO_CALLER_LIMITS = ["--rate-limit", "off", "--failed-lookups", "off", "--max-active-tasks", "1000000"];

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

async function createTasks(url: string, tool: string, count: number, args: (i: number) => string): Promise<string[]> {
  const ids = new Array<string>(count);
  await pooled(count, async (i) => {
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": V2026,
        "mcp-method": "tools/call",
        "mcp-name": tool,
      },
      body: `{"jsonrpc":"2.0","id":${++rpcId},"method":"tools/call","params":{"name":"${tool}","arguments":${args(i)},"task":{"ttl":3600000},${META}}}`,
    });
    const text = await response.text();
    const id = /"taskId":"([^"]+)"/.exec(text)?.[1];
    if (response.status !== 200 || id === undefined) throw new Error(`creating ${tool}: HTTP ${response.status} ${text.slice(0, 300)}`);
    ids[i] = id;
  });
  return ids;
}

/** Reads the file (read-only, WAL: the server's writes are seen as committed). */
function read<T>(file: string, query: (db: Database.Database) => T): T {
  const db = new Database(file, { readonly: true });
  try {
    return query(db);
  } finally {
    db.close();
  }
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<number> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return Date.now() - started;
}

/** Each parked task's row, history and waits, as one string per task. */
function parkedSnapshot(file: string): Map<string, string> {
  return read(file, (db) => {
    const rows = db.prepare<[], Record<string, unknown>>("SELECT * FROM tasks WHERE wait_mode = 'parked' ORDER BY id").all();
    const history = db.prepare<[string], Record<string, unknown>>("SELECT * FROM task_history WHERE task_id = ?");
    const waits = db.prepare<[string], Record<string, unknown>>("SELECT * FROM task_waits WHERE task_id = ?");
    return new Map(
      rows.map((row) => {
        const id = String(row["id"]);
        return [id, JSON.stringify([row, history.all(id), waits.all(id)])];
      }),
    );
  });
}

function serve(file: string, workers: number, graceMs: number): CliProcess {
  return CliProcess.spawn([
    "serve",
    "--demo",
    "--store",
    `sqlite:${file}`,
    "--port",
    "0",
    "--workers",
    String(workers),
    "--drain-timeout",
    String(graceMs),
    "--inline-wait-ms",
    "0",
    ...NO_CALLER_LIMITS,
  ]);
}

export async function parkedDrain(options: ParkedDrainOptions): Promise<ParkedDrainReport> {
  const { dir, parked, running, runMs, graceMs, napLeadMs, workers = 8 } = options;
  const file = join(dir, "parked-drain.db");
  const first = serve(file, workers, graceMs);
  const url = await first.url(60_000);

  const created = Date.now();
  const napCount = Math.floor(parked / 3);
  const approvals = await createTasks(url, "approve", parked - napCount, (i) => `{"action":"a${i}"}`);
  const napsDue = Date.now() + napLeadMs;
  const naps = await createTasks(url, "nap", napCount, () => `{"until":${napsDue}}`);
  const countParked = (): number =>
    read(file, (db) => db.prepare<[], { n: number }>("SELECT count(*) AS n FROM tasks WHERE wait_mode = 'parked'").get()!.n);
  await until(() => countParked() === parked, 120_000, `${parked} tasks to be parked`);
  const creationMs = Date.now() - created;

  const sleeps = await createTasks(url, "sleep", running, () => `{"ms":${runMs}}`);
  const started = (): number =>
    read(file, (db) => {
      const one = db.prepare<[string], { started_at: number | null }>("SELECT started_at FROM tasks WHERE id = ?");
      return sleeps.filter((id) => one.get(id)?.started_at != null).length;
    });
  await until(() => started() === running, 30_000, `the ${running} sleeps to start`);
  const before = parkedSnapshot(file);

  const signalled = Date.now();
  first.child.kill("SIGTERM");
  const exit = await first.exited;
  const exited = Date.now();
  const after = parkedSnapshot(file);
  let parkedRewritten = 0;
  for (const [id, snapshot] of before) if (after.get(id) !== snapshot) parkedRewritten++;
  const runningCompleted = read(file, (db) => {
    const one = db.prepare<[string], { status: string }>("SELECT status FROM tasks WHERE id = ?");
    return sleeps.filter((id) => one.get(id)?.status === "completed").length;
  });
  const lines = first.stderr.items;
  const draining = lines.find((l) => l["msg"] === "draining: no new tasks; waiting for running handlers");
  const handedBack = lines.filter((l) => l["audit"] === "handed_back").map((l) => String(l["taskId"]));

  const second = serve(file, workers, graceMs);
  const url2 = await second.url(60_000);
  const resumed = Date.now();
  let woken = 0;
  await pooled(approvals.length, async (i) => {
    const response = await fetch(new URL(`/events/approval/${approvals[i]}`, url2), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"approved":true,"by":"drain"}`,
    });
    const body = (await response.json()) as { woken?: number };
    woken += body.woken ?? 0;
  });
  const ids = [...approvals, ...naps];
  const completed = (): number =>
    read(file, (db) => {
      const one = db.prepare<[string], { status: string }>("SELECT status FROM tasks WHERE id = ?");
      return ids.filter((id) => one.get(id)?.status === "completed").length;
    });
  const resumedMs = await until(
    () => completed() === ids.length,
    120_000 + Math.max(0, napsDue - Date.now()),
    "every parked task to complete",
  ).then(() => Date.now() - resumed);
  second.child.kill("SIGTERM");
  await second.exited;
  return {
    parkedBefore: before.size,
    parkedRewritten,
    parkedAfter: after.size,
    exit,
    exitMs: exited - signalled,
    runningCompleted,
    drainingRunning: draining?.["running"],
    handedBack,
    napsDueAfterExitMs: napsDue - exited,
    woken,
    resumedMs,
    completedAfter: completed(),
    creationMs,
  };
}
