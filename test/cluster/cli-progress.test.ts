/**
 * `mcp-tasks call` against a cluster front (shared sessions: the GET stream is fed by the event
 * bus, whichever process runs the task), in a real pseudo-terminal (tmux), run after run with one
 * state directory as a person does. A run's progress reaches it only over the GET stream of its
 * own session, which the CLI must have open.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BIN, REPO_ROOT } from "../support/cli-process.js";
import { Cluster } from "../support/cluster.js";
import { hasTmux, shellQuote, TmuxTerminal } from "../support/tmux.js";

let cluster: Cluster;
let state: string;
const terminals: TmuxTerminal[] = [];

beforeAll(async () => {
  if (!hasTmux()) throw new Error("tmux is not installed: this test reads the progress bar in a pseudo-terminal (apt-get install tmux)");
  cluster = await Cluster.start({ fronts: 1, workers: 1, concurrency: 2, logLevel: "info" });
  state = mkdtempSync(join(tmpdir(), "mcp-tasks-cluster-cli-"));
}, 60_000);

afterEach(async () => {
  for (const terminal of terminals.splice(0)) await terminal.close();
});

afterAll(async () => {
  await cluster?.stop();
  if (state) rmSync(state, { recursive: true, force: true });
});

async function runInTerminal(args: string[]): Promise<TmuxTerminal> {
  const cli = [process.execPath, BIN, ...args].map(shellQuote).join(" ");
  const terminal = await TmuxTerminal.start(
    `cd ${shellQuote(REPO_ROOT)} && MCP_TASKS_PROTOCOL=2025-11-25 MCP_TASKS_STATE_DIR=${shellQuote(state)} ${cli}; echo "EXIT=$?"; sleep 600`,
  );
  terminals.push(terminal);
  return terminal;
}

describe("mcp-tasks call against a cluster, in a terminal", { timeout: 90_000 }, () => {
  it("the progress bar moves in every run, not only the first", async () => {
    for (const run of [1, 2, 3]) {
      const term = await runInTerminal(["call", cluster.urls[0] as string, "sleep", '{"ms":6000,"steps":6}', "--task"]);
      const moving = await term.waitFor(/[1-9]\d*% \| working/, 30_000).catch((error: unknown) => {
        throw new Error(`run ${run}: ${error instanceof Error ? error.message : String(error)}`);
      });
      expect(moving).toMatch(/[█░]+ (\d+\/\d+ )?[1-9]\d*% \| working/);
      expect(await term.waitFor("EXIT=", 30_000)).toContain("EXIT=0");
      await term.close();
      terminals.splice(terminals.indexOf(term), 1);
    }
  });
});
