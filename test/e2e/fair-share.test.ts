/**
 * The fair share, in real processes on real stores: `serve --demo` on a SQLite file with bearer
 * tokens for two principals, and the PostgreSQL cluster with two workers. One principal's flood
 * of tasks never keeps another's few waiting behind it (round-robin over callers, FIFO within
 * one); what waits is queued in `working` and says so; beyond the queue bound a creation is
 * refused at once and the server stays responsive.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CliProcess } from "../support/cli-process.js";
import { Cluster } from "../support/cluster.js";
import { callToolAsTask, expectRpcError, getTask, taskResult } from "../support/conformance.js";
import { connectHttpClient, type HttpClient } from "../support/http-fixture.js";
import { statelessRpc } from "../support/stateless-client.js";

const A = "tok-fair-a-41c2";
const B = "tok-fair-b-9e07";
const dir = mkdtempSync(join(tmpdir(), "fair-share-"));
const tokens = join(dir, "tokens.json");
writeFileSync(tokens, JSON.stringify({ [A]: "principal-a", [B]: "principal-b" }));

const processes: CliProcess[] = [];
const clients: HttpClient[] = [];
let cluster: Cluster | undefined;

afterAll(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await Promise.all(processes.map((p) => p.kill("SIGKILL")));
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function serve(name: string, args: string[]): Promise<string> {
  const server = CliProcess.spawn([
    "serve",
    "--demo",
    "--port",
    "0",
    "--no-web",
    "--log-level",
    "info",
    "--store",
    `sqlite:${join(dir, `${name}.db`)}`,
    "--auth-tokens",
    tokens,
    "--rate-limit",
    "off",
    ...args,
  ]);
  processes.push(server);
  return server.url();
}

async function connect(url: string, token: string): Promise<HttpClient> {
  const c = await connectHttpClient(url, { token });
  clients.push(c);
  return c;
}

const SLEEP = { ms: 300 };
// The rate limiter is off in these servers: A's 200 creations and 200 reads in a few seconds are
// over its default bucket, and the fair share, not the limiter, is what is measured here.

/** A's 200 sleeps, then B's 4: B's results are all in within 2 s while most of A's still wait. */
async function floodThenFew(url: string, a: HttpClient, b: HttpClient): Promise<void> {
  const flood = await Promise.all(Array.from({ length: 200 }, () => callToolAsTask(a.client, "sleep", SLEEP)));
  const submitted = Date.now();
  const few = await Promise.all(Array.from({ length: 4 }, () => callToolAsTask(b.client, "sleep", SLEEP)));
  const results = await Promise.all(few.map(({ task }) => taskResult(b.client, task.taskId)));
  const elapsed = Date.now() - submitted;
  expect(results.every((r) => r.isError !== true)).toBe(true);
  // FIFO over 4 handlers would make B wait for A's 200 × 300 ms / 4 = 15 s.
  expect(elapsed).toBeLessThan(2000);
  const states = await Promise.all(flood.map(({ task }) => getTask(a.client, task.taskId)));
  const queued = states.filter((t) => t.status === "working" && /^queued \(\d+ ahead\)$/.test(t.statusMessage ?? ""));
  expect(queued.length).toBeGreaterThan(100);
  // The last of A's says how many of A's own start before it (read while the others move on).
  const last = await getTask(a.client, flood[flood.length - 1]?.task.taskId ?? "");
  const ahead = Number(/^queued \((\d+) ahead\)$/.exec(last.statusMessage ?? "")?.[1]);
  expect(ahead).toBeGreaterThan(90);
  expect(ahead).toBeLessThan(200);
  // /metrics shows the queue per owner and tool.
  const metrics = await (await fetch(new URL("/metrics", url))).text();
  const line = metrics.split("\n").find((l) => l.startsWith('mcp_tasks_queued{owner="local|principal-a",tool="sleep"}'));
  expect(Number(line?.split(" ")[1])).toBeGreaterThan(50);
}

describe("a fair share for every caller (real processes)", { timeout: 120_000 }, () => {
  it("single node, SQLite, --workers 4 --max-running-per-principal 4: B's 4 tasks finish within 2 s behind A's 200", async () => {
    const url = await serve("fair", ["--workers", "4", "--max-running-per-principal", "4", "--max-active-tasks", "1000"]);
    await floodThenFew(url, await connect(url, A), await connect(url, B));
  });

  it("the PostgreSQL cluster with two workers: B's 4 tasks finish within 2 s behind A's 200", async () => {
    cluster = await Cluster.start({
      fronts: 1,
      workers: 2,
      concurrency: 2,
      logLevel: "info",
      frontArgs: ["--auth-tokens", tokens, "--rate-limit", "off", "--max-active-tasks", "1000"],
      workerArgs: ["--max-running-per-principal", "4"],
    });
    const url = cluster.urls[0] as string;
    await floodThenFew(url, await connect(url, A), await connect(url, B));
  });

  it("over --max-queued-per-principal a creation is refused at once, nothing stored, and the server stays responsive to others", async () => {
    const url = await serve("bound", [
      "--workers",
      "2",
      "--max-running-per-principal",
      "1",
      "--max-queued-per-principal",
      "10",
      "--max-active-tasks",
      "1000",
    ]);
    const a = await connect(url, A);
    const b = await connect(url, B);
    // One starts (A's cap), ten wait: A's queue is full.
    const first = await callToolAsTask(a.client, "sleep", { ms: 10_000 });
    await expect
      .poll(async () => (await getTask(a.client, first.task.taskId)).statusMessage ?? "started", { timeout: 5000 })
      .not.toMatch(/^queued/);
    for (let i = 0; i < 10; i++) await callToolAsTask(a.client, "sleep", { ms: 10_000 });
    const started = Date.now();
    const refusals = await Promise.all(
      Array.from({ length: 50 }, () =>
        expectRpcError(
          callToolAsTask(a.client, "sleep", { ms: 10_000 }),
          -32600,
          "Too many queued tasks: at most 10 per requestor may wait for a handler; retry later",
        ),
      ),
    );
    expect(Date.now() - started).toBeLessThan(2000);
    expect(refusals[0]?.data).toEqual({ name: "queued_tasks", limit: 10, retryAfterMs: 1000 });
    // Plain HTTP (2026-07-28, one JSON response): 429 with Retry-After.
    const plain = await statelessRpc(url, "tools/call", { name: "sleep", arguments: { ms: 10_000 } }, { token: A });
    expect(plain.status).toBe(429);
    expect(plain.headers.get("retry-after")).toBe("1");
    expect(plain.body.error).toMatchObject({ code: -32600, data: { name: "queued_tasks", limit: 10, retryAfterMs: 1000 } });
    const listed = await a.client.request(
      { method: "tasks/list", params: {} },
      (await import("@modelcontextprotocol/sdk/types.js")).ListTasksResultSchema,
    );
    expect(listed.tasks).toHaveLength(11);
    // B has a queue of its own: its task takes the handler A may not use (A runs its one) and is
    // answered while A's queue stays full.
    const asked = Date.now();
    const other = await callToolAsTask(b.client, "sleep", { ms: 50 });
    expect((await taskResult(b.client, other.task.taskId)).isError).not.toBe(true);
    expect(Date.now() - asked).toBeLessThan(2000);
  });
});
