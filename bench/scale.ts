/**
 * `npm run bench:scale`: does the server stay flat as stored tasks grow 1k → 10k → 100k → 1M
 * (issue #14 part 4)? One server (serveHttp + createTaskServer + demo tools + web view + metrics)
 * on a SQLite file (or PostgreSQL with `--store postgres`), its store filled step by step; at each
 * size, over real HTTP on 127.0.0.1, the p50 of:
 *   - tasks/get of one of the client's tasks (SDK Client, Streamable HTTP),
 *   - a tasks/list page (the client's first page: the filler's tasks belong to the same owner),
 *   - the web view's list with its counts per status (GET /tasks/api/tasks, admin: every task),
 *   - the live feed's first frame (GET /tasks/api/events until its `ready` event),
 *   - a /metrics scrape,
 * and the process's RSS. Prints a table with each figure's ratio to its 1k value and writes the
 * curve as docs/bench/scale.svg.
 *
 * The filler writes rows straight into the tasks table with SQL (the store's own schema, so its
 * triggers write the timeline and the kept counts as for any task): terminal tasks without a TTL,
 * spread over the client's owner and 9 others and 3 tools, created before the client's tasks.
 *
 * Flags: `npm run bench:scale -- --help`.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { setTimeout as pause } from "node:timers/promises";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import pg from "pg";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  ListTasksResultSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { registerDemoTools } from "../src/demo/demo-tools.js";
import { staticTokenVerifier } from "../src/http/bearer-auth.js";
import type { TokenGrant } from "../src/http/token-file.js";
import { serveHttp } from "../src/http/http-server.js";
import { createTaskServer } from "../src/mcp/task-server.js";
import { TaskMetrics } from "../src/metrics/task-metrics.js";
import { postgresStore } from "../src/store/postgres/postgres-store.js";
import { sqliteStore } from "../src/store/sqlite/sqlite-store.js";
import type { TaskStore } from "../src/store/task-store.js";
import { webRoutes } from "../src/web/web-routes.js";
import { exitOnHelp, numberFlag, runBench } from "./support/command-line.js";
import { machine } from "./support/machine.js";
import { spread } from "./support/stats.js";
import { lineChartSvg } from "./support/svg-chart.js";

const HELP = `Usage: npm run bench:scale -- [flags]
  --store sqlite|postgres  the store to fill (default sqlite; postgres uses MCP_TASKS_TEST_PG or
                           postgres://postgres@127.0.0.1:5432/test, in a schema dropped after the run)
  --sizes LIST             stored task counts, ascending, comma-separated (default 1000,10000,100000,1000000)
  --samples N              requests per measure and size (default 200)
  --chart PATH             where the SVG goes (default docs/bench/scale.svg; "-" for none)
  --help`;

const { values: flags } = parseArgs({
  options: {
    store: { type: "string", default: "sqlite" },
    sizes: { type: "string", default: "1000,10000,100000,1000000" },
    samples: { type: "string", default: "200" },
    chart: { type: "string", default: "docs/bench/scale.svg" },
    help: { type: "boolean", default: false },
  },
});
exitOnHelp(HELP, flags.help);
if (flags.store !== "sqlite" && flags.store !== "postgres") {
  console.error(`--store must be sqlite or postgres\n\n${HELP}`);
  process.exit(2);
}
const STORE = flags.store;
const SIZES = flags.sizes.split(",").map((s) => numberFlag(HELP, "sizes", s.trim(), { min: 10 }));
if (SIZES.some((size, i) => i > 0 && size <= (SIZES[i - 1] ?? 0))) {
  console.error(`--sizes must be ascending\n\n${HELP}`);
  process.exit(2);
}
const SAMPLES = numberFlag(HELP, "samples", flags.samples, { min: 1 });
const PG_URL = process.env["MCP_TASKS_TEST_PG"] ?? "postgres://postgres@127.0.0.1:5432/test";
const ADMIN = "bench-admin-token";
const USER = "bench-user-token";
/** The client's own tasks (created through the server), measured by tasks/get and tasks/list. */
const OWN_TASKS = 20;
/** Rows per fill transaction; the filler yields between them so the server (same process) keeps answering. */
const FILL_BATCH = 20_000;
const TOOLS = ["sleep", "echo", "ask"];
const STATUSES = ["completed", "completed", "completed", "failed", "cancelled"];
const ORIGIN = JSON.stringify({ sessionId: null, progressToken: null, accepts: [] });

interface Filler {
  /** Adds `n` terminal tasks, created before `before`, a share of them owned by `owner`. */
  fill(n: number, owner: string, before: number): Promise<void>;
  close(): Promise<void>;
}

function sqliteFiller(path: string): Filler {
  const db = new Database(path);
  db.pragma("busy_timeout = 10000");
  const insert = db.prepare(`
    INSERT INTO tasks (id, owner, method, name, request, origin, status, status_message, created_at, updated_at,
                       ttl_ms, expires_at, poll_interval_ms, retryable, outcome, progress)
    VALUES (?, ?, 'tools/call', ?, ?, ?, ?, NULL, ?, ?, NULL, NULL, 1000, 0, ?, NULL)`);
  let made = 0;
  const batch = db.transaction((n: number, owner: string, before: number) => {
    for (let i = 0; i < n; i++, made++) {
      const name = TOOLS[made % TOOLS.length] ?? "sleep";
      const status = STATUSES[made % STATUSES.length] ?? "completed";
      const createdAt = before - 1_000_000_000 + made;
      insert.run(
        randomUUID(),
        made % 10 === 0 ? owner : `bench|owner-${made % 10}`,
        name,
        JSON.stringify({ name, arguments: { ms: made % 100 } }),
        ORIGIN,
        status,
        createdAt,
        createdAt + 5,
        status === "completed" ? JSON.stringify({ kind: "result", value: { content: [{ type: "text", text: `done ${made}` }] } }) : null,
      );
    }
  });
  return {
    async fill(n, owner, before) {
      for (let done = 0; done < n; done += FILL_BATCH) {
        batch.immediate(Math.min(FILL_BATCH, n - done), owner, before);
        await pause(1);
      }
    },
    async close() {
      db.close();
    },
  };
}

function postgresFiller(schema: string): Filler {
  const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
  let made = 0;
  return {
    async fill(n, owner, before) {
      for (let done = 0; done < n; done += FILL_BATCH) {
        const size = Math.min(FILL_BATCH, n - done);
        // One statement per batch, generated server-side: the same rows the SQLite filler writes.
        await pool.query(
          `INSERT INTO "${schema}".tasks (id, owner, method, name, request, origin, status, created_at, updated_at, poll_interval_ms, retryable, outcome)
           SELECT gen_random_uuid()::text,
                  CASE WHEN i % 10 = 0 THEN $1 ELSE 'bench|owner-' || (i % 10) END,
                  'tools/call', (ARRAY['sleep','echo','ask'])[i % 3 + 1],
                  '{"name":"sleep","arguments":{"ms":' || (i % 100) || '}}', $2,
                  (ARRAY['completed','completed','completed','failed','cancelled'])[i % 5 + 1],
                  $3::bigint - 1000000000 + i, $3::bigint - 1000000000 + i + 5, 1000, false,
                  CASE WHEN i % 5 < 3 THEN '{"kind":"result","value":{"content":[{"type":"text","text":"done ' || i || '"}]}}' END
           FROM generate_series($4::bigint, $5::bigint) AS i`,
          [owner, ORIGIN, before, made, made + size - 1],
        );
        made += size;
      }
      await pool.query(`ANALYZE "${schema}".tasks`);
    },
    async close() {
      await pool.end();
    },
  };
}

async function timed(samples: number, run: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < Math.min(100, samples); i++) await run(); // warm-up: caches, plans, JIT, heap growth
  const ms: number[] = [];
  for (let i = 0; i < samples; i++) {
    const start = performance.now();
    await run();
    ms.push(performance.now() - start);
  }
  return spread(ms).p50;
}

async function fetchOk(url: string, token: string): Promise<string> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const text = await response.text();
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status} ${text.slice(0, 200)}`);
  return text;
}

/** Opens the live feed and resolves once its first frame (`ready`) is in; then closes it. */
async function firstFeedFrame(url: string): Promise<void> {
  const abort = new AbortController();
  const response = await fetch(url, { headers: { authorization: `Bearer ${ADMIN}` }, signal: abort.signal });
  if (!response.ok || !response.body) throw new Error(`feed: HTTP ${response.status}`);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes("event: ready")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("feed closed before its first frame");
    text += decoder.decode(value, { stream: true });
  }
  abort.abort();
  await reader.cancel().catch(() => {});
}

interface Row {
  size: number;
  fillS: number;
  get: number;
  list: number;
  web: number;
  feed: number;
  metrics: number;
  rssMb: number;
  /** The 1-minute load average when the size was measured: other work on the machine moves every figure. */
  load: number;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-scale-"));
  const schema = `mcp_tasks_scale_${process.pid}`;
  const path = join(dir, "tasks.db");
  let store: TaskStore;
  if (STORE === "sqlite") store = sqliteStore(path);
  else {
    const pgStore = postgresStore(PG_URL, { schema });
    await pgStore.migrate();
    store = pgStore;
  }
  const metrics = new TaskMetrics();
  const verifier = staticTokenVerifier(
    new Map<string, string | TokenGrant>([
      [ADMIN, { principal: "bench-admin", admin: true }],
      [USER, "bench-user"],
    ]),
  );
  const app = createTaskServer({ name: "bench-scale", version: "1.0.0", store, metrics, rateLimit: "off", maxStoredPerOwner: 100_000_000 });
  registerDemoTools(app);
  // The feed's own timing (coalescing, counts at most once a second) as a server runs it.
  const http = await serveHttp(app, { port: 0, host: "127.0.0.1", verifier, routes: webRoutes(app, { adminTokens: [ADMIN], verifier }) });
  const base = new URL(http.url).origin;
  const filler = STORE === "sqlite" ? sqliteFiller(path) : postgresFiller(schema);

  const client = new Client({ name: "bench-scale", version: "1.0.0" }, { capabilities: {} });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(http.url), { requestInit: { headers: { authorization: `Bearer ${USER}` } } }),
  );
  const own: string[] = [];
  for (let i = 0; i < OWN_TASKS; i++) {
    const created = await client.request(
      { method: "tools/call", params: { name: "sleep", arguments: { ms: 0 } } },
      CreateTaskResultSchema,
      { task: { ttl: 24 * 3600_000 } },
    );
    own.push(created.task.taskId);
    await client.request({ method: "tasks/result", params: { taskId: created.task.taskId } }, CallToolResultSchema);
  }
  const owner = (await store.get(own[0] ?? "", { any: true }))?.owner;
  if (owner === undefined || owner === null) throw new Error("the client's task has no owner");
  const before = Math.min(...(await Promise.all(own.map(async (id) => (await store.get(id, { any: true }))?.createdAt ?? Date.now()))));

  const rows: Row[] = [];
  let stored = OWN_TASKS;
  for (const size of SIZES) {
    const start = performance.now();
    await filler.fill(size - stored, owner, before);
    stored = size;
    const fillS = (performance.now() - start) / 1000;
    // Let the server and the client's connection pool catch up on what fell due while filling
    // (idle keep-alive sockets the server closed), so the first request does not meet a reset.
    await pause(500);
    let i = 0;
    const row: Row = {
      size,
      fillS,
      get: await timed(SAMPLES, () =>
        client.request({ method: "tasks/get", params: { taskId: own[i++ % own.length] ?? "" } }, GetTaskResultSchema),
      ),
      list: await timed(SAMPLES, () => client.request({ method: "tasks/list", params: {} }, ListTasksResultSchema)),
      web: await timed(SAMPLES, () => fetchOk(`${base}/tasks/api/tasks`, ADMIN)),
      feed: await timed(SAMPLES, () => firstFeedFrame(`${base}/tasks/api/events`)),
      metrics: await timed(SAMPLES, () => fetchOk(`${base}/metrics`, ADMIN)),
      rssMb: process.memoryUsage().rss / 1024 / 1024,
      load: loadavg()[0] ?? NaN,
    };
    rows.push(row);
    console.error(`filled ${size} tasks in ${fillS.toFixed(1)} s; measured`);
  }

  const first = rows[0];
  if (!first) return;
  const measures = [
    ["tasks/get", "get"],
    ["tasks/list page", "list"],
    ["web list + counts", "web"],
    ["feed first frame", "feed"],
    ["/metrics scrape", "metrics"],
  ] as const;
  const m = machine();
  const out: string[] = [];
  out.push(
    `npm run bench:scale -- --store ${STORE}  (${m.cores} × ${m.model}, node ${process.version}, ${SAMPLES} samples per cell, p50 ms; ratio to ${first.size} stored tasks in brackets)`,
  );
  const header = ["stored tasks", "fill s", ...measures.map(([label]) => label), "RSS MB", "load"];
  const cells = rows.map((r) => [
    r.size.toLocaleString("en-US"),
    r.fillS.toFixed(1),
    ...measures.map(([, key]) => `${r[key].toFixed(2)} (${(r[key] / first[key]).toFixed(2)}×)`),
    `${r.rssMb.toFixed(0)} (${(r.rssMb / first.rssMb).toFixed(2)}×)`,
    r.load.toFixed(1),
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...cells.map((row) => (row[c] ?? "").length)));
  const line = (row: readonly string[]): string => `| ${row.map((cell, c) => cell.padEnd(widths[c] ?? 0)).join(" | ")} |`;
  out.push(line(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...cells.map(line));
  console.log(out.join("\n"));

  if (flags.chart !== "-") {
    const chartPath = resolve(flags.chart);
    mkdirSync(dirname(chartPath), { recursive: true });
    writeFileSync(
      chartPath,
      lineChartSvg({
        title: `Time at 1k → ${rows.at(-1)?.size.toLocaleString("en-US")} stored tasks, ratio to 1k (${STORE}, p50)`,
        xs: rows.map((r) => r.size),
        xLabel: "stored tasks (log scale)",
        yLabel: "p50 time / p50 at the smallest size",
        series: [
          ...measures.map(([label, key]) => ({ label, values: rows.map((r) => r[key] / first[key]) })),
          { label: "RSS", values: rows.map((r) => r.rssMb / first.rssMb) },
        ],
        reference: { y: 1.5, label: "1.5× bound" },
      }),
    );
    console.log(`chart: ${flags.chart}`);
  }

  await client.close();
  await http.close();
  await filler.close();
  if (STORE === "postgres") {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
  rmSync(dir, { recursive: true, force: true });
}

runBench(main, "bench:scale");
