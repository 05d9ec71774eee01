/**
 * withTasks on SDK McpServers served over the SDK's StreamableHTTPServerTransport in a node:http
 * server of the test's own (fixtures/http-server.ts: one McpServer per session, one engine): the
 * shared behaviours with tasks in PostgreSQL (a fresh schema) and in a SQLite file, and owner binding.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { postgresStore } from "../../src/exports/postgres.js";
import { sqliteStore } from "../../src/exports/sqlite.js";
import { callToolAsTask, expectRpcError, getTask, listAllTasks, taskResult } from "../support/conformance.js";
import { freshSchemas, TEST_PG_URL } from "../support/postgres.js";
import { CLIENT_CAPABILITIES, sdkServerBehaviours, type Connected } from "./behaviours.js";
import { startSdkHttpApp, type SdkHttpApp } from "./fixtures/http-server.js";

const schemas = freshSchemas("sdk_server_http");
afterAll(() => schemas.dropAll());

const dir = mkdtempSync(join(tmpdir(), "sdk-server-http-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

function startApp(on: "postgres" | "sqlite" = "postgres"): Promise<SdkHttpApp> {
  const store = on === "postgres" ? postgresStore(TEST_PG_URL, { schema: schemas.next() }) : sqliteStore(join(dir, `tasks-${++files}.db`));
  return startSdkHttpApp({ store, pollIntervalMs: 50 });
}

/** An SDK client of `app`, authenticated as `principal` (the fixture's stand-in for a bearer token). */
async function clientOf(app: SdkHttpApp, principal?: string): Promise<Client> {
  const headers: Record<string, string> = principal === undefined ? {} : { "x-principal": principal };
  const transport = new StreamableHTTPClientTransport(new URL(app.url), { requestInit: { headers } });
  const client = new Client({ name: "sdk-server-http", version: "0.0.0" }, { capabilities: CLIENT_CAPABILITIES });
  await client.connect(transport);
  return client;
}

async function connectHttp(on: "postgres" | "sqlite"): Promise<Connected> {
  const app = await startApp(on);
  const client = await clientOf(app);
  return {
    client,
    async close() {
      await client.close().catch(() => {});
      await app.close();
    },
  };
}

describe("withTasks over Streamable HTTP on PostgreSQL", { timeout: 30_000 }, () => {
  sdkServerBehaviours(() => connectHttp("postgres"));
});

describe("withTasks over Streamable HTTP on SQLite", { timeout: 30_000 }, () => {
  sdkServerBehaviours(() => connectHttp("sqlite"));
});

describe("withTasks owner binding (T-SEC-1, T-SEC-3)", { timeout: 30_000 }, () => {
  let app: SdkHttpApp | undefined;
  const clients: Client[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close().catch(() => {});
    await app?.close();
    app = undefined;
  });

  it("binds a task to the principal of extra.authInfo: another principal can neither get, list nor read it", async () => {
    app = await startApp();
    const alice = await clientOf(app, "alice");
    const bob = await clientOf(app, "bob");
    clients.push(alice, bob);
    const { task } = await callToolAsTask(alice, "count", { steps: 1 });
    await taskResult(alice, task.taskId);
    await expectRpcError(getTask(bob, task.taskId), -32602);
    await expectRpcError(taskResult(bob, task.taskId), -32602);
    expect((await listAllTasks(bob)).map((t) => t.taskId)).not.toContain(task.taskId);
    expect((await listAllTasks(alice)).map((t) => t.taskId)).toContain(task.taskId);
  });

  it("gives the callback the creating request's extra.authInfo", async () => {
    app = await startApp();
    const alice = await clientOf(app, "alice");
    clients.push(alice);
    const { task } = await callToolAsTask(alice, "whoami", {});
    expect((await taskResult(alice, task.taskId)).content).toEqual([{ type: "text", text: "alice" }]);
  });
});
