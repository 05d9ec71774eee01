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

  it("are JSON lines when stderr is not a terminal", async () => {
    const server = CliProcess.spawn(["serve", "--demo", "--store", "memory", "--port", "0"]);
    const url = await server.url();
    expect(server.stderr.items.find((line) => line["url"] === url)).toMatchObject({ level: 30, msg: `listening on ${url}` });
  });
});
