/**
 * The CLI's journal across the fronts of one cluster: a task created through one front and read
 * through another keeps what the journal knows of it (its era, its tool), in both eras. Fronts of
 * one cluster share their tasks, so a person who reaches them by their own addresses (no balancer
 * in between) reads a task through whichever front is at hand.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli-process.js";
import { ERAS, nextCreated } from "../support/cli-eras.js";
import { Cluster } from "../support/cluster.js";

let cluster: Cluster;
const dirs: string[] = [];

beforeAll(async () => {
  cluster = await Cluster.start({ fronts: 2, workers: 1, concurrency: 4, logLevel: "info" });
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-across-fronts-"));
  dirs.push(dir);
  return dir;
}

/** What each era's `tasks list` shows of a task created through another front. */
const LISTING = {
  // tasks/list: the server lists every task of the caller, whichever front created it.
  "2025-11-25": "listed",
  // No tasks/list: the journal's tasks of this very target. Another front's ids are never sent to
  // this one (task ids are capabilities; by its address it is any other server), and the note says so.
  "2026-07-28": "not listed",
} as const;

/** The protocol each journal record of a task went over, in order. */
function erasOf(state: string, taskId: string): string[] {
  return readFileSync(join(state, "journal.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as { taskId: string; protocol?: string })
    .filter((e) => e.taskId === taskId)
    .map((e) => e.protocol ?? "2025-11-25");
}

describe.each(ERAS)("CLI across the fronts of a cluster ($name)", { timeout: 60_000 }, (era) => {
  const env = (state: string): Record<string, string> => ({ MCP_TASKS_PROTOCOL: era.protocol, MCP_TASKS_STATE_DIR: state });
  const a = (): string => cluster.urls[0] as string;
  const b = (): string => cluster.urls[1] as string;

  it("a task created through one front is read to its result through another, in the era it was created in", async () => {
    const state = stateDir();
    const created = await runCli(["call", a(), "sleep", '{"ms":1500}', "--task", "--detach"], { env: env(state) });
    expect(created.code, created.stderr).toBe(0);
    const taskId = await nextCreated(state, 0);
    // The era left to the CLI, as a user runs it: the journal's record of the creation through
    // the other front says which one the task lives in.
    const result = await runCli(["tasks", "result", b(), taskId, "--json"], {
      env: { MCP_TASKS_PROTOCOL: "auto", MCP_TASKS_STATE_DIR: state },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ taskId, status: "completed" });
    expect(new Set(erasOf(state, taskId))).toEqual(new Set([era.name]));
  });

  it("tasks list through another front names the tool of each task it lists", async () => {
    const state = stateDir();
    const created = await runCli(["call", a(), "sleep", '{"ms":1500}', "--task", "--detach"], { env: env(state) });
    expect(created.code, created.stderr).toBe(0);
    const taskId = await nextCreated(state, 0);
    const listed = await runCli(["tasks", "list", b()], { env: env(state) });
    expect(listed.code, listed.stderr).toBe(0);
    const row = listed.stdout.split("\n").find((line) => line.includes(taskId));
    if (LISTING[era.name] === "listed") {
      expect(row, listed.stdout).toMatch(/\bsleep\b/);
    } else {
      expect(row, listed.stdout).toBeUndefined();
      expect(listed.stdout + listed.stderr).toContain("Tasks created elsewhere are not here");
    }
  });
});
