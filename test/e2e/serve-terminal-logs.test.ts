/** `mcp-tasks serve` logs readable lines on a terminal and JSON lines otherwise. */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { BIN, CliProcess, killAll, REPO_ROOT } from "../support/cli-process.js";
import { hasTmux, shellQuote, TmuxTerminal } from "../support/tmux.js";

let terminal: TmuxTerminal | null = null;
afterEach(async () => {
  await terminal?.close();
  terminal = null;
  await killAll();
});

describe("serve's logs", { timeout: 60_000 }, () => {
  beforeAll(() => {
    if (!hasTmux()) throw new Error("tmux is not installed: this test runs serve in a pseudo-terminal (apt-get install tmux)");
  });

  it("are readable lines, not JSON, when stderr is a terminal", async () => {
    const serve = [process.execPath, BIN, "serve", "--demo", "--store", "memory", "--port", "0"].map(shellQuote).join(" ");
    terminal = await TmuxTerminal.start(`cd ${shellQuote(REPO_ROOT)} && ${serve}`, { width: 200 });
    const screen = await terminal.waitFor("listening on http://127.0.0.1:");
    const line = screen.split("\n").find((l) => l.includes("listening on"))!;
    expect(line).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO/);
    expect(line).not.toContain('"level"');
  });

  it("are one line per event on a terminal, an audit event's fields on its own line", async () => {
    const serve = [process.execPath, BIN, "serve", "--demo", "--store", "memory", "--port", "0"].map(shellQuote).join(" ");
    terminal = await TmuxTerminal.start(`cd ${shellQuote(REPO_ROOT)} && ${serve}`, { width: 400 });
    const listening = await terminal.waitFor("listening on http://127.0.0.1:");
    const url = /listening on (http:\/\/\S+)/.exec(listening)![1]!;
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "sleep",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "sleep",
          arguments: { ms: 10 },
          _meta: {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } },
            "io.modelcontextprotocol/clientInfo": { name: "terminal-test", version: "1.0.0" },
          },
        },
      }),
    });
    expect(response.ok).toBe(true);
    const screen = await terminal.waitFor("task completed");
    const created = screen.split("\n").find((l) => l.includes("task created"))!;
    expect(created).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO.*task created.*"audit":\s*"created".*"taskId":/);
  });

  it("are JSON lines when stderr is not a terminal", async () => {
    const server = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0"]);
    const url = await server.url();
    expect(server.stderr.items.find((line) => line["url"] === url)).toMatchObject({ level: 30, msg: `listening on ${url}` });
  });
});
