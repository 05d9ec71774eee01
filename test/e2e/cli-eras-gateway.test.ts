/**
 * A waiting `call … --task` whose connection is lost because the gateway in front of the server
 * dies, in both protocol eras from the table of test/e2e/cli-eras.test.ts: real CLI processes, a
 * real `mcp-tasks gateway` on a SQLite file in front of the demo server over stdio (a task server
 * of its own, on a file of its own), the gateway killed with SIGKILL and started again on the same
 * file and port. The CLI follows the task to its real end, or says the task may still be running;
 * it never reports a failure the task did not have, and Ctrl-C while it reconnects ends cleanly.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ERAS, nextCreated, createdIds } from "../support/cli-eras.js";
import { BIN, CliProcess, killAll, REPO_ROOT } from "../support/cli-process.js";
import { freePort } from "../support/free-port.js";
import { hasTmux, shellQuote, TmuxTerminal } from "../support/tmux.js";
import { TASK_ID_PATTERN } from "../support/task-id-pattern.js";

const json = (stdout: string): Record<string, unknown> => JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;

/** `mcp-tasks gateway` on a fixed port and SQLite file, so it can be killed and started again at the same URL. */
class Gateway {
  process: CliProcess | null = null;
  constructor(
    readonly port: number,
    readonly dir: string,
  ) {
    // `steps` checkpoints each step and is safe to run again: retried after a crash, it completes.
    writeFileSync(join(dir, "gateway.json"), JSON.stringify({ tools: { steps: { recovery: "retry" } } }));
  }
  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }
  async start(): Promise<void> {
    // The upstream's drain on the SIGTERM it gets when the gateway dies is short, so the next
    // upstream finds its file free soon; the gateway's short lease lets the restarted gateway take
    // back the killed one's task in seconds rather than the default 30.
    const upstream = [
      process.execPath,
      BIN,
      "serve",
      "--stdio",
      "--demo",
      "--store",
      `sqlite:${join(this.dir, "upstream.db")}`,
      "--drain-timeout",
      "1000",
    ]
      .map((w) => JSON.stringify(w))
      .join(" ");
    this.process = CliProcess.spawn([
      "gateway",
      "--port",
      String(this.port),
      "--no-web",
      "--store",
      `sqlite:${join(this.dir, "gateway.db")}`,
      "--lease-ms",
      "3000",
      "--poll-interval",
      "100",
      "--config",
      join(this.dir, "gateway.json"),
      "--upstream-stdio",
      upstream,
    ]);
    // The gateway listens once its upstream is connected and listed: two tsx start-ups.
    await this.process.url(90_000);
  }
  /** SIGKILL, waiting for the gateway's exit only (its orphaned upstream may hold stderr open a while). */
  async kill9(): Promise<void> {
    const child = this.process?.child;
    this.process = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.kill("SIGKILL");
    });
  }
}

let dir: string;
let terminal: TmuxTerminal | null = null;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "mcp-tasks-cli-eras-gateway-"));
});

afterEach(async () => {
  await terminal?.close();
  terminal = null;
});

afterAll(async () => {
  await killAll();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(ERAS)("mcp-tasks call under $name when the gateway in front of the server is killed", (era) => {
  let gateway: Gateway;
  let stateDir: string;
  const env = (extra: Record<string, string> = {}) => ({ MCP_TASKS_STATE_DIR: stateDir, MCP_TASKS_PROTOCOL: era.protocol, ...extra });

  beforeAll(async () => {
    stateDir = mkdtempSync(join(dir, `${era.name}-`));
    gateway = new Gateway(await freePort(), stateDir);
    await gateway.start();
  }, 120_000);

  afterAll(async () => {
    await gateway.kill9();
  });

  /** Kills the gateway once a step or two of the newest task ran, and starts it again after `downMs`. */
  async function killAndRestart(downMs: number): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 800));
    await gateway.kill9();
    await new Promise((resolve) => setTimeout(resolve, downMs));
    await gateway.start();
  }

  it("a waiting call follows its task across a SIGKILL and restart of the gateway to the real end", { timeout: 180_000 }, async () => {
    const before = createdIds(stateDir).length;
    const call = CliProcess.spawn(["call", gateway.url, "steps", '{"count":6,"ms":500}', "--task", "--json"], { env: env() });
    await nextCreated(stateDir, before);
    await killAndRestart(1000);
    const exit = await call.exited;
    expect(exit.code, call.stderrText).toBe(0);
    expect(json(call.stdout)).toMatchObject({ status: "completed", result: { structuredContent: { count: 6 } } });
    expect(call.stderrText).not.toMatch(/failed/);
  });

  it(
    "a waiting call in a terminal shows the reconnection, not a failure, and ends with the task's real outcome",
    { timeout: 180_000 },
    async () => {
      if (!hasTmux()) throw new Error("tmux is not installed: the pseudo-terminal tests need it (apt-get install tmux)");
      const before = createdIds(stateDir).length;
      const command = [process.execPath, BIN, "call", gateway.url, "steps", '{"count":6,"ms":500}', "--task"].map(shellQuote).join(" ");
      terminal = await TmuxTerminal.start(
        `cd ${shellQuote(REPO_ROOT)} && MCP_TASKS_PROTOCOL=${era.protocol} MCP_TASKS_STATE_DIR=${shellQuote(stateDir)} ${command}; echo "EXIT=$?"; sleep 600`,
      );
      await nextCreated(stateDir, before);
      await new Promise((resolve) => setTimeout(resolve, 800));
      await gateway.kill9();
      await terminal.waitFor("connection lost — reconnecting", 20_000);
      expect(await terminal.screen()).not.toMatch(/✖|failed/);
      await gateway.start();
      const screen = await terminal.waitFor("EXIT=", 90_000);
      expect(screen).toMatch(/✔ task \S+ completed in/);
      expect(screen).not.toMatch(/✖|failed/);
      expect(screen).toContain("EXIT=0");
    },
  );

  it(
    "a waiting call whose gateway does not come back says the task may still be running and how to collect it, exit 4 — never failed",
    { timeout: 180_000 },
    async () => {
      const before = createdIds(stateDir).length;
      const call = CliProcess.spawn(["call", gateway.url, "batch", '{"ms":30000}', "--task"], {
        env: env({ MCP_TASKS_REATTACH_MS: "2000" }),
      });
      await nextCreated(stateDir, before);
      await gateway.kill9();
      try {
        const exit = await call.exited;
        expect(exit.code, call.stderrText).toBe(4);
        expect(call.stderrText).toMatch(
          new RegExp(
            `connection lost; the task may still be running: mcp-tasks tasks result ${gateway.url.replace(/[.]/g, "\\.")} ${TASK_ID_PATTERN}`,
          ),
        );
        expect(call.stderrText).not.toMatch(/\bfailed\b/);
      } finally {
        await gateway.start();
      }
    },
  );

  it("SIGINT while the connection is lost detaches with one clear line, no transport error", { timeout: 180_000 }, async () => {
    const before = createdIds(stateDir).length;
    const call = CliProcess.spawn(["call", gateway.url, "batch", '{"ms":30000}', "--task"], { env: env() });
    const id = await nextCreated(stateDir, before);
    await gateway.kill9();
    try {
      // Without a terminal there is no one to ask: Ctrl-C detaches.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const exit = await call.kill("SIGINT");
      expect(call.stderrText).toContain(`Detached; the task goes on. Collect it with: mcp-tasks tasks result ${gateway.url} ${id}`);
      expect(call.stderrText).not.toMatch(/Error POSTing|fetch failed|\bfailed\b/);
      expect(exit.code, call.stderrText).toBe(5);
    } finally {
      await gateway.start();
    }
  });

  it(
    "Ctrl-C → Cancel while the connection is lost and the gateway does not come back says the cancel could not be sent and how to send it, exit 4",
    { timeout: 180_000 },
    async () => {
      if (!hasTmux()) throw new Error("tmux is not installed: the pseudo-terminal tests need it (apt-get install tmux)");
      const before = createdIds(stateDir).length;
      const command = [process.execPath, BIN, "call", gateway.url, "batch", '{"ms":30000}', "--task"].map(shellQuote).join(" ");
      // The cancel is owed until the task can be reached again; a short window lets the command give up.
      terminal = await TmuxTerminal.start(
        `cd ${shellQuote(REPO_ROOT)} && MCP_TASKS_REATTACH_MS=3000 MCP_TASKS_PROTOCOL=${era.protocol} MCP_TASKS_STATE_DIR=${shellQuote(stateDir)} ${command}; echo "EXIT=$?"; sleep 600`,
        { width: 250 },
      );
      const id = await nextCreated(stateDir, before);
      await gateway.kill9();
      try {
        await terminal.waitFor("connection lost — reconnecting", 20_000);
        await terminal.press("C-c");
        await terminal.waitFor("What now?", 10_000);
        await terminal.press("Down", "Enter");
        const screen = await terminal.waitFor("EXIT=", 20_000);
        expect(screen).toContain(
          `could not cancel the task: the connection to the server is lost; try again with: mcp-tasks tasks cancel ${gateway.url} ${id}`,
        );
        expect(screen).not.toMatch(/Error POSTing|fetch failed|✖/);
        expect(screen).toContain("EXIT=4");
      } finally {
        await gateway.start();
      }
    },
  );

  it(
    "Ctrl-C → Cancel while the connection is lost is sent once the gateway is back: the task ends cancelled, exit 3",
    { timeout: 180_000 },
    async () => {
      if (!hasTmux()) throw new Error("tmux is not installed: the pseudo-terminal tests need it (apt-get install tmux)");
      const before = createdIds(stateDir).length;
      // `steps` is retried after the gateway's crash (gateway.json), so the task is still there to cancel.
      const command = [process.execPath, BIN, "call", gateway.url, "steps", '{"count":120,"ms":500}', "--task"].map(shellQuote).join(" ");
      terminal = await TmuxTerminal.start(
        `cd ${shellQuote(REPO_ROOT)} && MCP_TASKS_PROTOCOL=${era.protocol} MCP_TASKS_STATE_DIR=${shellQuote(stateDir)} ${command}; echo "EXIT=$?"; sleep 600`,
        { width: 250 },
      );
      const id = await nextCreated(stateDir, before);
      await new Promise((resolve) => setTimeout(resolve, 800));
      await gateway.kill9();
      await terminal.waitFor("connection lost — reconnecting", 20_000);
      await terminal.press("C-c");
      await terminal.waitFor("What now?", 10_000);
      await terminal.press("Down", "Enter");
      await terminal.waitFor("reconnecting to send the cancel", 20_000);
      await gateway.start();
      const screen = await terminal.waitFor("EXIT=", 90_000);
      expect(screen).toContain("EXIT=3");
      expect(screen).not.toMatch(/could not cancel|Error POSTing|fetch failed/);
      const shown = CliProcess.spawn(["tasks", "get", gateway.url, id, "--json"], { env: env() });
      expect((await shown.exited).code, shown.stderrText).toBe(0);
      expect(json(shown.stdout)).toMatchObject({ status: "cancelled" });
    },
  );
});
