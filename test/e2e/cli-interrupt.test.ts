/**
 * Ctrl-C on a waiting plain `mcp-tasks call` withdraws the call (exit 3, "Interrupted: the call was
 * withdrawn.") and the withdrawal reaches the server: the tool's signal aborts there at once, not
 * when some timeout runs out. Both eras, from one table, against a real `serve`: 2025-11-25 sends
 * notifications/cancelled on the session, which must leave before the CLI closes its connection;
 * 2026-07-28 drops the request's connection.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CliProcess, killAll } from "../support/cli-process.js";

let server: CliProcess;
let url: string;
let state: string;

beforeAll(async () => {
  server = CliProcess.spawn(["serve", "--tools", "test/support/hold-tools.ts", "--store", "memory", "--port", "0"]);
  url = await server.url();
  state = mkdtempSync(join(tmpdir(), "mcp-tasks-cli-interrupt-"));
}, 30_000);

afterAll(async () => {
  await killAll();
  rmSync(state, { recursive: true, force: true });
});

describe.each(["2025-11-25", "2026-07-28"])("Ctrl-C on a plain call (%s)", (protocol) => {
  it("withdraws the call: exit 3, and the tool's signal aborts on the server within a second", { timeout: 40_000 }, async () => {
    const tag = `interrupt-${protocol}`;
    const call = CliProcess.spawn(["call", url, "hold", JSON.stringify({ tag }), "--no-task"], {
      env: { MCP_TASKS_PROTOCOL: protocol, MCP_TASKS_STATE_DIR: state },
    });
    await server.stderr.waitFor((line) => line["msg"] === "hold started" && line["tag"] === tag, "the tool to start", 20_000);
    call.child.kill("SIGINT");
    const sent = performance.now();
    expect(await call.exited).toEqual({ code: 3, signal: null });
    expect(call.stderrText).toContain("Interrupted: the call was withdrawn.");
    await server.stderr.waitFor((line) => line["msg"] === "hold aborted" && line["tag"] === tag, "the tool's signal to abort", 5_000);
    expect(performance.now() - sent).toBeLessThan(1_000);
  });
});
