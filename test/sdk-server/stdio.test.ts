/**
 * withTasks on an SDK McpServer served over stdio (fixtures/stdio-server.ts in its own process):
 * the shared behaviours with tasks in a SQLite file and in PostgreSQL (a fresh schema), and a
 * task that outlives its process on SQLite.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/cli-process.js";
import { callToolAsTask, getTask, RELATED_TASK, taskResult } from "../support/conformance.js";
import { freshSchemas, TEST_PG_URL } from "../support/postgres.js";
import { CLIENT_CAPABILITIES, sdkServerBehaviours, type Connected } from "./behaviours.js";

const dir = mkdtempSync(join(tmpdir(), "sdk-server-stdio-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const TSX = join(REPO_ROOT, "node_modules/tsx/dist/cli.mjs");
const SCRIPT = join(REPO_ROOT, "test/sdk-server/fixtures/stdio-server.ts");

const schemas = freshSchemas("sdk_server_stdio");
afterAll(() => schemas.dropAll());

/** Starts the fixture on the store `spec` names (`sqlite:PATH`, `postgres://…?schema=…`) and connects the SDK client to it. */
async function connectStdio(spec: string): Promise<Connected> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [TSX, SCRIPT, spec], cwd: REPO_ROOT, stderr: "pipe" });
  const client = new Client({ name: "sdk-server-stdio", version: "0.0.0" }, { capabilities: CLIENT_CAPABILITIES });
  await client.connect(transport);
  return {
    client,
    async close() {
      const pid = transport.pid;
      await client.close().catch(() => {});
      // The transport ends stdin, then escalates; make sure nothing outlives the test.
      try {
        if (pid !== null) process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    },
  };
}

const freshFile = (): string => `sqlite:${join(dir, `tasks-${++files}.db`)}`;

describe("withTasks over stdio on SQLite", { timeout: 60_000 }, () => {
  sdkServerBehaviours(() => connectStdio(freshFile()));
});

describe("withTasks over stdio on PostgreSQL", { timeout: 60_000 }, () => {
  const url = new URL(TEST_PG_URL);
  sdkServerBehaviours(() => {
    url.searchParams.set("schema", schemas.next());
    return connectStdio(url.toString());
  });
});

describe("withTasks on SQLite across a restart", { timeout: 60_000 }, () => {
  const opened: Connected[] = [];
  afterEach(async () => {
    for (const c of opened.splice(0)) await c.close();
  });

  it("serves a finished task's result from a new process on the same file", async () => {
    const file = freshFile();
    const first = await connectStdio(file);
    opened.push(first);
    const { task } = await callToolAsTask(first.client, "count", { steps: 2 }, { ttl: 600_000 });
    const before = await taskResult(first.client, task.taskId);
    await first.close();

    const second = await connectStdio(file);
    opened.push(second);
    expect((await getTask(second.client, task.taskId)).status).toBe("completed");
    const after = await taskResult(second.client, task.taskId);
    expect(after).toEqual(before);
    expect(after._meta).toEqual({ [RELATED_TASK]: { taskId: task.taskId } });
  });
});
