/**
 * A real `mcp-tasks gateway` process in front of a stdio upstream that counts the calls it
 * receives, in both eras: idempotency keys (SEP-3182) name one gateway task and one upstream
 * call; the config's `dedupe` joins a keyless retry of a host without tasks to the running task;
 * the config's per-tool `concurrency` (the tool definition's) keeps a second task queued until
 * the first ends.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { TaskClient } from "../../src/client/task-client.js";
import type { ProtocolRevision } from "../../src/mcp/requestor/requestor-eras.js";
import { killAll, REPO_ROOT } from "../support/cli-process.js";
import { statelessRpc } from "../support/stateless-client.js";
import { closeClients, eventually, nodeCommand, startGateway, type GatewayProcess } from "./gateway-fixture.js";
import { GatewayConfig, GatewayConfigFile } from "../../src/gateway/gateway-config.js";
import { TASK_ID_PATTERN } from "../support/task-id-pattern.js";

const COUNTING_UPSTREAM = join(REPO_ROOT, "test/gateway/fixtures/counting-upstream.mjs");
const ANY = z.looseObject({});

const dir = mkdtempSync(join(tmpdir(), "gateway-keys-"));
let gateway: GatewayProcess;
const clients: TaskClient[] = [];

beforeAll(async () => {
  const config = join(dir, "gateway.json");
  writeFileSync(config, JSON.stringify({ tools: { work: { dedupe: true, concurrency: 1 }, calls: { taskSupport: "forbidden" } } }));
  // --inline-wait-ms 0: under 2026-07-28 a call as a task is answered with its task at once.
  gateway = await startGateway([
    "--store",
    "memory",
    "--config",
    config,
    "--background-after",
    "200",
    "--inline-wait-ms",
    "0",
    "--upstream-stdio",
    nodeCommand(COUNTING_UPSTREAM),
  ]);
}, 60_000);

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close().catch(() => {});
  await closeClients();
});

afterAll(async () => {
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

async function connect(protocol: ProtocolRevision): Promise<TaskClient> {
  const client = await TaskClient.connect(gateway.url, { protocol });
  clients.push(client);
  return client;
}

/** How many `work` calls the upstream has received under `tag`. */
async function upstreamCalls(client: TaskClient, tag: string): Promise<number> {
  const call = await client.callTool("calls", { tag }, { task: false });
  if (call.kind !== "result") throw new Error("calls answers plainly");
  const first = call.result.content[0];
  return Number(first?.type === "text" ? first.text : NaN);
}

async function taskOf(client: TaskClient, args: Record<string, unknown>, key: string) {
  const call = await client.callTool("work", args, { task: true, idempotencyKey: key });
  if (call.kind !== "task") throw new Error("expected a task");
  return call.task;
}

/** One plain keyless call of `work` from a host that declares no tasks, answered in the background; the task its answer names. */
type KeylessCall = (args: Record<string, unknown>) => Promise<string | undefined>;

const backgroundTaskId = (answer: unknown): string | undefined =>
  new RegExp(`task (${TASK_ID_PATTERN})`).exec(JSON.stringify(answer ?? {}))?.[1];

const KEYLESS: Record<ProtocolRevision, KeylessCall> = {
  "2025-11-25": async (args) => {
    const host = await gateway.connect({ capabilities: {} });
    try {
      return backgroundTaskId(
        await host.client.request({ method: "tools/call", params: { name: "work", arguments: args } }, ANY, { timeout: 30_000 }),
      );
    } catch (error) {
      if (error instanceof McpError) return undefined;
      throw error;
    }
  },
  "2026-07-28": async (args) =>
    backgroundTaskId((await statelessRpc(gateway.url, "tools/call", { name: "work", arguments: args }, { declare: false })).body.result),
};

describe.each<ProtocolRevision>(["2025-11-25", "2026-07-28"])("gateway (%s)", (protocol) => {
  it("two identical keyed creations: one task and one upstream call; another key: another task", async () => {
    const client = await connect(protocol);
    const tag = `keyed-${protocol}`;
    const first = await taskOf(client, { tag }, `${tag}-1`);
    const again = await taskOf(client, { tag }, `${tag}-1`);
    expect(again.id).toBe(first.id);
    await first.result();
    expect(await upstreamCalls(client, tag)).toBe(1);
    const other = await taskOf(client, { tag }, `${tag}-2`);
    expect(other.id).not.toBe(first.id);
    await other.result();
    expect(await upstreamCalls(client, tag)).toBe(2);
  }, 60_000);

  it("dedupe in the config: a keyless retry of a host without tasks while the first runs joins its task, one upstream call", async () => {
    const client = await connect(protocol);
    const tag = `keyless-${protocol}`;
    const [a, b] = await Promise.all([KEYLESS[protocol]({ tag, ms: 1500 }), KEYLESS[protocol]({ tag, ms: 1500 })]);
    expect(a).toBeDefined();
    expect(b).toBe(a);
    await client.task(a ?? "").result();
    expect(await upstreamCalls(client, tag)).toBe(1);
  }, 60_000);

  it("concurrency 1 in the config: the second task waits queued until the first ends", async () => {
    const client = await connect(protocol);
    const tag = `queued-${protocol}`;
    const first = await taskOf(client, { tag, ms: 1500 }, `${tag}-a`);
    const second = await taskOf(client, { tag, ms: 10 }, `${tag}-b`);
    const waiting = await second.status();
    expect(waiting.status).toBe("working");
    expect(waiting.statusMessage).toMatch(/^queued/);
    expect((await first.status()).status).toBe("working");
    await first.result();
    await second.result();
    expect(await eventually("both upstream calls", async () => ((await upstreamCalls(client, tag)) === 2 ? true : undefined))).toBe(true);
  }, 60_000);
});

describe("gateway config dedupe", () => {
  it("a tool's entry overrides defaults, and anything but a boolean is refused", () => {
    const config = new GatewayConfig({ defaults: { dedupe: true }, tools: { charge: { dedupe: false } } });
    expect(config.tool("search").dedupe).toBe(true);
    expect(config.tool("charge").dedupe).toBe(false);
    expect(GatewayConfigFile.safeParse({ tools: { search: { dedupe: "yes" } } }).success).toBe(false);
  });
});
