/**
 * The gateway with other real upstreams and across its own restart: server-filesystem on a
 * temporary folder, server-everything over Streamable HTTP with credentials in a header, and a
 * SQLite store that keeps finished results through a gateway restart (T-RES, durable).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { cliEnv, killAll } from "../support/cli-process.js";
import { callToolAsTask, taskResult } from "../support/conformance.js";
import { closeClients, EVERYTHING, eventually, FILESYSTEM, nodeCommand, startGateway } from "./gateway-fixture.js";
import { freePort } from "../support/free-port.js";

const dirs: string[] = [];
const children: Array<ReturnType<typeof spawn>> = [];
afterEach(async () => {
  await closeClients();
  await killAll();
  for (const child of children.splice(0)) child.kill("SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-gateway-"));
  dirs.push(dir);
  return dir;
}

// Each test starts real processes (gateway, upstream), seconds each on a shared machine.
describe("gateway with other upstreams", { timeout: 90_000 }, () => {
  it("reads a file of a temporary folder through server-filesystem as a task", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "note.txt"), "gateway was here");
    const gateway = await startGateway(["--store", "memory", "--upstream-stdio", nodeCommand(FILESYSTEM, dir)]);
    const { client } = await gateway.connect();
    const created = await callToolAsTask(client, "read_text_file", { path: join(dir, "note.txt") });
    const result = await taskResult(client, created.task.taskId);
    expect(result.content).toEqual([{ type: "text", text: "gateway was here" }]);
  });

  it("serves finished results after a gateway restart (SQLite store)", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "kept.txt"), "still here");
    const store = `sqlite:${join(dir, "tasks.db")}`;
    const args = ["--store", store, "--upstream-stdio", nodeCommand(FILESYSTEM, dir)];
    const first = await startGateway(args);
    const before = await first.connect();
    const created = await callToolAsTask(before.client, "read_text_file", { path: join(dir, "kept.txt") });
    await taskResult(before.client, created.task.taskId);
    await closeClients();
    await first.cli.kill("SIGTERM");
    const second = await startGateway(args);
    const after = await second.connect();
    expect((await taskResult(after.client, created.task.taskId)).content).toEqual([{ type: "text", text: "still here" }]);
  });

  it("calls an upstream over Streamable HTTP with the --upstream-header credentials, and never logs them", async () => {
    const port = await freePort();
    const upstream = spawn(process.execPath, [EVERYTHING, "streamableHttp"], { env: cliEnv({ PORT: String(port) }), stdio: "ignore" });
    children.push(upstream);
    const secret = "s3cret-upstream-token";
    const url = `http://127.0.0.1:${port}/mcp`;
    const gateway = await eventually("the gateway to reach the upstream", async () => {
      const started = await startGateway([
        "--store",
        "memory",
        "--upstream-url",
        url,
        "--upstream-header",
        `Authorization: Bearer ${secret}`,
      ]);
      return started;
    });
    const { client } = await gateway.connect();
    const result = await client.request(
      { method: "tools/call", params: { name: "echo", arguments: { message: "over http" } } },
      CallToolResultSchema,
    );
    expect(result.content).toEqual([{ type: "text", text: "Echo: over http" }]);
    expect(gateway.cli.stderrText).not.toContain(secret);
  });
});
