/**
 * `mcp-tasks call` tested as a person uses it: in a real pseudo-terminal (tmux), typing at the
 * prompts and reading the screen.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { BIN, REPO_ROOT } from "../support/cli-process.js";
import { startHttpServer, type HttpServerFixture } from "../support/http-fixture.js";
import { hasTmux, shellQuote, TmuxTerminal } from "../support/tmux.js";
import { ANONYMOUS_CALLER } from "../../src/core/caller.js";

const tmux = hasTmux();

let server: HttpServerFixture;
let state: string;
let terminal: TmuxTerminal | null = null;
beforeEach(async () => {
  server = await startHttpServer({ app: { pollIntervalMs: 50 } });
  state = mkdtempSync(join(tmpdir(), "mcp-tasks-tty-"));
});
afterEach(async () => {
  await terminal?.close();
  terminal = null;
  await server.close();
  rmSync(state, { recursive: true, force: true });
});

/** Runs `mcp-tasks <args>` in a terminal, then prints its exit code and stays on screen. */
async function runInTerminal(args: string[]): Promise<TmuxTerminal> {
  const cli = [process.execPath, BIN, ...args].map(shellQuote).join(" ");
  const line = `cd ${shellQuote(REPO_ROOT)} && MCP_TASKS_PROTOCOL=2025-11-25 MCP_TASKS_STATE_DIR=${shellQuote(state)} ${cli}; echo "EXIT=$?"; sleep 600`;
  terminal = await TmuxTerminal.start(line);
  return terminal;
}

describe("mcp-tasks call in a terminal", { timeout: 60_000 }, () => {
  // Never skipped: without tmux these tests fail and say why (.ci/run installs it).
  beforeAll(() => {
    if (!tmux) throw new Error("tmux is not installed: the pseudo-terminal tests of `mcp-tasks call` need it (apt-get install tmux)");
  });

  it("T-INPUT-3: the ask tool's elicitation goes straight to its field; the typed answer completes the task (exit 0)", async () => {
    const term = await runInTerminal(["call", server.url.href, "ask", '{"question":"Favourite colour?"}', "--task"]);
    const asked = await term.waitFor("? answer");
    expect(asked).toContain("Favourite colour?");
    expect(asked).toContain("Esc: decline · Ctrl-D: cancel");
    await term.type("blue");
    await term.press("Enter");
    const screen = await term.waitFor("EXIT=");
    expect(screen).toContain("answer: blue");
    expect(screen).toContain("EXIT=0");
  });

  it("SEP-1034: a multi-select's default choices come ticked; ticking one more sends the defaults and it", async () => {
    server.app.tool("pick_tags", { input: z.object({}), taskSupport: "optional" }, async (_args, ctx) => {
      const answer = await ctx.elicit({
        mode: "form",
        message: "Tags?",
        requestedSchema: {
          type: "object",
          properties: { tags: { type: "array", items: { type: "string", enum: ["red", "green", "blue"] }, default: ["green", "blue"] } },
        },
      });
      return { content: [{ type: "text", text: `tags: ${JSON.stringify(answer.content?.["tags"])}` }] };
    });
    const term = await runInTerminal(["call", server.url.href, "pick_tags", "{}", "--task"]);
    const asked = await term.waitFor("? tags");
    // inquirer's checkbox: ◉ ticked, ◯ not.
    expect(asked).toMatch(/◯ red/);
    expect(asked).toMatch(/◉ green/);
    expect(asked).toMatch(/◉ blue/);
    await term.press("Space"); // the cursor starts on red
    await term.press("Enter");
    const screen = await term.waitFor("EXIT=");
    expect(screen).toContain('tags: ["red","green","blue"]');
    expect(screen).toContain("EXIT=0");
  });

  it("Esc at the elicitation's field answers decline", async () => {
    const term = await runInTerminal(["call", server.url.href, "ask", '{"question":"Share your location?"}', "--task"]);
    await term.waitFor("? answer");
    await term.type("half-typed");
    await term.press("Escape");
    const screen = await term.waitFor("EXIT=");
    expect(screen).toMatch(/^declined$/m);
    expect(screen).toContain("EXIT=0");
  });

  it("Ctrl-D at the elicitation's field answers cancel", async () => {
    const term = await runInTerminal(["call", server.url.href, "ask", '{"question":"Share your location?"}', "--task"]);
    await term.waitFor("? answer");
    await term.press("C-d");
    const screen = await term.waitFor("EXIT=");
    expect(screen).toMatch(/^cancelled$/m);
    expect(screen).toContain("EXIT=0");
  });

  it("shows a live progress bar and status line while the task runs; Ctrl-C → Cancel cancels it (exit 3)", async () => {
    const term = await runInTerminal(["call", server.url.href, "sleep", '{"ms":30000,"steps":30}', "--task"]);
    const running = await term.waitFor(/\d+% \| working/);
    expect(running).toMatch(/[█░]+ \d+\/30 \d+% \| working/);
    await term.press("C-c");
    await term.waitFor("still running. What now?");
    await term.press("Down", "Enter"); // "Cancel the task"
    const screen = await term.waitFor("EXIT=");
    expect(screen).toContain("Task was cancelled");
    expect(screen).toContain("EXIT=3");
  });

  it("a plain call of a tool that reports progress draws the bar (done/total, elapsed time) and ends with a summary line", async () => {
    const term = await runInTerminal(["call", server.url.href, "sleep", '{"ms":2000,"steps":4}', "--no-task"]);
    // Before the call has a status the line says what it does ("calling"), not a status it does not have.
    const running = await term.waitFor(/[█░]+ [1-3]\/4 \d+% \| calling \| \ds/);
    expect(running).not.toContain("| task ");
    const screen = await term.waitFor("EXIT=");
    expect(screen).toMatch(/^✔ completed in [2-9]\.\ds$/m);
    expect(screen).toContain("slept 2000 ms");
    expect(screen).toContain("EXIT=0");
  });

  it("a task's bar starts from a spinner, not a bare 0, and shows the task id and elapsed time", async () => {
    const term = await runInTerminal(["call", server.url.href, "sleep", '{"ms":2000,"steps":4}', "--task"]);
    const first = await term.waitFor(/\| working \| \ds \| task [0-9a-z]{9}[0-9a-f]{32}/);
    expect(first).toMatch(/^(?:[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]|[█░]+ [0-4]\/4 \d+%) \| working \| \ds \| task [0-9a-z]{9}[0-9a-f]{32}/m);
    await term.waitFor(/[█░]+ [1-3]\/4 \d+% \| working \| \ds \| task [0-9a-z]{9}[0-9a-f]{32}/);
  });

  it("a task ends with a summary line naming the task, how it ended and how long it took", async () => {
    const term = await runInTerminal(["call", server.url.href, "sleep", '{"ms":2000,"steps":4}', "--task"]);
    const screen = await term.waitFor("EXIT=");
    expect(screen).toMatch(/^✔ task [0-9a-z]{9}[0-9a-f]{32} completed in [2-9]\.\ds$/m);
    expect(screen).toContain("EXIT=0");
  });

  it("a cancelled task's summary line says cancelled", async () => {
    const term = await runInTerminal(["call", server.url.href, "sleep", '{"ms":30000,"steps":30}', "--task"]);
    await term.waitFor(/\| working \|/);
    await term.press("C-c");
    await term.waitFor("still running. What now?");
    await term.press("Down", "Enter");
    const screen = await term.waitFor("EXIT=");
    expect(screen).toMatch(/^■ task [0-9a-z]{9}[0-9a-f]{32} cancelled after \d+\.\ds$/m);
  });

  it("Ctrl-C → Detach prints the task id and leaves the task running (exit 5)", async () => {
    const term = await runInTerminal(["call", server.url.href, "sleep", '{"ms":30000}', "--task"]);
    await term.waitFor("working");
    await term.press("C-c");
    await term.waitFor("Detach");
    await term.press("Enter");
    const screen = await term.waitFor("EXIT=");
    expect(screen).toContain("EXIT=5");
    const id = /\b([0-9a-z]{9}[0-9a-f]{32})\b/.exec(screen)?.[1];
    expect(id).toBeDefined();
    expect((await server.app.engine.get(id, ANONYMOUS_CALLER)).status).toBe("working");
  });

  it("a sampling request shows the conversation and sends the reply the person types", async () => {
    const term = await runInTerminal(["call", server.url.href, "sample", '{"prompt":"Say hello"}', "--task"]);
    await term.waitFor("user: Say hello");
    await term.waitFor("Type the reply");
    await term.press("Enter");
    await term.waitFor("? Your reply");
    await term.type("hello from a human");
    await term.press("Enter");
    const screen = await term.waitFor("EXIT=");
    expect(screen).toContain("hello from a human");
    expect(screen).toContain("EXIT=0");
  });
});
