/**
 * What every reliability scenario shares: a scratch folder per test with every spawned server
 * killed after it, and the closing judgement — each acknowledged task looked up on a fresh
 * session, and none lost, stuck or wrong.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect } from "vitest";
import { killAll } from "../cli-process.js";
import { RawSession } from "./raw-session.js";
import type { TaskLedger, Verdict } from "./task-ledger.js";

/** Registers the per-test scratch folder; the returned function gives the current test's. `cleanup` runs before the folder goes. */
export function scratchDirPerTest(cleanup?: () => void): () => string {
  let dir = "";
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "mcp-tasks-reliability-"));
  });
  afterEach(async () => {
    await killAll();
    cleanup?.();
    rmSync(dir, { recursive: true, force: true });
  });
  return () => dir;
}

export const until = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Judges `ledger` against the server at `url` (waiting up to 30 s for tasks to settle) and expects nothing lost, stuck or wrong. */
export async function expectNothingLost(ledger: TaskLedger, url: string): Promise<Verdict> {
  const session = await RawSession.open(url);
  const verdict = await ledger.judge(session, 30_000);
  await session.close();
  expect(verdict.examples).toEqual([]);
  expect({ lost: verdict.lost, stuck: verdict.stuck, wrong: verdict.wrong }).toEqual({ lost: 0, stuck: 0, wrong: 0 });
  return verdict;
}
