/**
 * A creation whose connection drops after the server stored it (a real TCP proxy loses the
 * answer) is sent again by the requestor under one idempotency key (SEP-3182), so the server
 * answers the re-send with the task it already has: one task, one run. In both eras, through
 * `TaskClient` and through the CLI (a real `mcp-tasks call` process), against a real HTTP server
 * on a SQLite file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { TaskClient } from "../../src/client/task-client.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { DroppingProxy } from "../support/dropping-proxy.js";
import { killAll, runCli } from "../support/cli-process.js";
import type { ProtocolRevision } from "../../src/mcp/requestor/requestor-eras.js";
import { ConnectionError } from "../../src/mcp/requestor/requestor-errors.js";
import { startSdkTaskServer } from "../support/sdk-task-server.js";

/** The marks of a task creation on the wire: its request, and an answer naming the task. */
const CREATION = { request: "tools/call", answer: "taskId" };

const dir = mkdtempSync(join(tmpdir(), "creation-resend-"));
const cleanups: Array<() => Promise<void>> = [];
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await killAll();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

interface Setup {
  fx: HttpServerFixture;
  proxy: DroppingProxy;
  runs: () => number;
  tasks: () => Promise<number>;
}

let servers = 0;
/** A server with a tool counting its runs, behind a proxy that loses the first creation's answer. */
async function setup(): Promise<Setup> {
  // inlineWaitMs 0: under 2026-07-28 a call as a task is answered with its task at once.
  const fx = await startHttpServer({ app: { store: sqliteStore(join(dir, `${++servers}.db`)), inlineWaitMs: 0 } });
  let runs = 0;
  fx.app.tool(
    "count",
    { description: "Counts its runs.", input: z.object({ tag: z.string() }), taskSupport: "optional" },
    async ({ tag }) => {
      runs++;
      return { content: [{ type: "text", text: `counted ${tag}` }] };
    },
  );
  const proxy = await DroppingProxy.start(fx.url.href, CREATION);
  cleanups.push(
    () => fx.close(),
    () => proxy.stop(),
  );
  const tasks = async (): Promise<number> =>
    (await fx.app.engine.inspect.search({ scope: { any: true }, name: "count" }, null, 100)).length;
  return { fx, proxy, runs: () => runs, tasks };
}

describe.each<ProtocolRevision>(["2025-11-25", "2026-07-28"])("a creation whose answer was lost (%s)", (protocol) => {
  it("TaskClient sends it again under one key of its own: the same task, run once", async () => {
    const { proxy, runs, tasks } = await setup();
    const client = await TaskClient.connect(proxy.url, { protocol });
    cleanups.push(() => client.close());
    const call = await client.callTool("count", { tag: "lost" }, { task: true });
    expect(call.kind).toBe("task");
    if (call.kind !== "task") return;
    expect(await call.task.result()).toMatchObject({ content: [{ type: "text", text: "counted lost" }] });
    expect(proxy.drops).toBe(1);
    expect(proxy.requests).toBe(2);
    expect(await tasks()).toBe(1);
    expect(runs()).toBe(1);
  }, 30_000);

  it("TaskClient sends it again under the caller's key: the same task, run once", async () => {
    const { proxy, runs, tasks } = await setup();
    const client = await TaskClient.connect(proxy.url, { protocol });
    cleanups.push(() => client.close());
    const call = await client.callTool("count", { tag: "keyed" }, { task: true, idempotencyKey: "order-17" });
    if (call.kind !== "task") throw new Error("expected a task");
    await call.task.result();
    const again = await client.callTool("count", { tag: "keyed" }, { task: true, idempotencyKey: "order-17" });
    expect(again.kind === "task" && again.task.id).toBe(call.task.id);
    expect(proxy.drops).toBe(1);
    expect(await tasks()).toBe(1);
    expect(runs()).toBe(1);
  }, 30_000);

  it("mcp-tasks call sends it again under one key of its own: one task, run once, its result printed", async () => {
    const { proxy, runs, tasks } = await setup();
    const out = await runCli(["call", proxy.url, "count", '{"tag":"cli"}', "--task"], { env: { MCP_TASKS_PROTOCOL: protocol } });
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("counted cli");
    expect(proxy.drops).toBe(1);
    expect(await tasks()).toBe(1);
    expect(runs()).toBe(1);
  }, 60_000);
});

// The official SDK's task server declares no tools.idempotency (2025-11-25 only: it has no 2026-07-28).
describe("a creation whose answer was lost, on a server that ignores idempotency keys", () => {
  it("TaskClient does not send it again: the connection error is the caller's", async () => {
    const server = await startSdkTaskServer();
    const proxy = await DroppingProxy.start(server.url, CREATION);
    cleanups.push(
      () => server.close(),
      () => proxy.stop(),
    );
    const client = await TaskClient.connect(proxy.url, { protocol: "2025-11-25" });
    cleanups.push(() => client.close());
    const error = await client.callTool("sleep", { ms: 10 }, { task: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionError);
    expect(proxy.drops).toBe(1);
    expect(proxy.requests).toBe(1);
  }, 30_000);
});
