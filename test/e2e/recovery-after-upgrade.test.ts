/**
 * Tasks keep the recovery they were created with: a task created while its tool declared no
 * recovery, interrupted by kill -9, is failed at the next start even when the tool now declares
 * `resume` — and its statusMessage says which declaration applied. Real `serve` processes on one
 * SQLite file, the tool's declaration changed between them (test/e2e/fixtures/recovery-tools.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { CliProcess, killAll } from "../support/cli-process.js";
import { callToolAsTask, getTask } from "../support/conformance.js";
import { connectHttpClient, type HttpClient } from "../support/http-fixture.js";
import { handlerStarted } from "../support/handler-started.js";
import { INTERRUPTED_MESSAGE } from "../../src/runtime/upkeep/recovery.js";

let dir: string;
const clients: HttpClient[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-recovery-upgrade-"));
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => {});
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

async function startServer(env: Record<string, string>): Promise<{ server: CliProcess; client: HttpClient }> {
  const args = ["serve", "--tools", "test/e2e/fixtures/recovery-tools.ts", "--store", `sqlite:${join(dir, "t.db")}`, "--port", "0"];
  const server = CliProcess.spawn(args, { env });
  const client = await connectHttpClient(await server.url(60_000));
  clients.push(client);
  return { server, client };
}

it(
  "a task created when its tool declared no recovery, killed -9, then started under a release whose tool declares resume, is failed saying it was created when the tool declared no recovery",
  { timeout: 120_000 },
  async () => {
    const before = await startServer({});
    const { task } = await callToolAsTask(before.client.client, "work", { ms: 60_000 });
    await handlerStarted(join(dir, "t.db"), task.taskId);
    expect(await before.server.kill("SIGKILL")).toEqual({ code: null, signal: "SIGKILL" });

    const after = await startServer({ WORK_RECOVERY: "resume" });
    const failed = await getTask(after.client.client, task.taskId);
    expect(failed.status).toBe("failed");
    expect(failed.statusMessage).toBe(INTERRUPTED_MESSAGE);
    expect(failed.statusMessage).toMatch(/created when its tool declared no recovery/);
  },
);
