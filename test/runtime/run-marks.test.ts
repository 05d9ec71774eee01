/**
 * A task's runs as its status timeline tells them (runsOf): each start and end of a run, why it
 * ended — finished, drained, lost — for a single node's restart and drain and a cluster's re-queue
 * and hand-back, from the messages those write.
 */
import { describe, expect, it } from "vitest";
import type { StatusChange } from "../../src/core/task.js";
import { HANDED_BACK_LOCAL_MESSAGE, HANDED_BACK_MESSAGE } from "../../src/runtime/drain.js";
import { runsOf } from "../../src/runtime/run-marks.js";
import { HANDED_BACK_RERUN_MESSAGE, INTERRUPTED_MESSAGE, RERUN_MESSAGE, RESUMED_MESSAGE } from "../../src/runtime/upkeep/recovery.js";

const at = (status: StatusChange["status"], statusMessage: string | null, time: number): StatusChange => ({
  status,
  statusMessage,
  at: time,
});
const REQUEUED = "The worker running this task stopped renewing its lease; the task was queued to run again (attempt 2 of 3)";

describe("runsOf", () => {
  it("one run that finished, whatever the final status", () => {
    for (const end of ["completed", "failed", "cancelled"] as const) {
      expect(runsOf([at("working", null, 0), at("input_required", "ask", 5), at("working", null, 8), at(end, null, 10)])).toEqual([
        { attempt: 1, startedBy: "created", startedAt: 0, endedAt: 10, ended: "finished", endMessage: null, node: null },
      ]);
    }
  });

  it("a still running task has one open run", () => {
    expect(runsOf([at("working", null, 0)])).toEqual([
      { attempt: 1, startedBy: "created", startedAt: 0, endedAt: null, ended: "running", endMessage: null, node: null },
    ]);
  });

  it("a restart: the first run was lost, the next resumed (recovery resume) or re-run (retry)", () => {
    for (const [message, startedBy] of [
      [RESUMED_MESSAGE, "resumed"],
      [RERUN_MESSAGE, "re-run"],
    ] as const) {
      const runs = runsOf([at("working", null, 0), at("working", message, 20), at("completed", null, 30)]);
      expect(runs.map((run) => [run.attempt, run.startedBy, run.ended, run.startedAt, run.endedAt])).toEqual([
        [1, "created", "lost", 0, 20],
        [2, startedBy, "finished", 20, 30],
      ]);
    }
  });

  it("a single node's drain: the run ends drained at the hand-back, the next start resumes it", () => {
    const runs = runsOf([
      at("working", null, 0),
      at("working", HANDED_BACK_LOCAL_MESSAGE, 12),
      at("working", HANDED_BACK_RERUN_MESSAGE, 40),
      at("completed", null, 50),
    ]);
    expect(runs.map((run) => [run.attempt, run.startedBy, run.ended, run.endedAt, run.endMessage])).toEqual([
      [1, "created", "drained", 12, HANDED_BACK_LOCAL_MESSAGE],
      [2, "resumed", "finished", 50, null],
    ]);
  });

  it("a cluster: a lost worker's task re-queued, a draining worker's handed back, then one that failed at a restart", () => {
    const runs = runsOf([
      at("working", null, 0),
      at("working", REQUEUED, 10),
      at("working", HANDED_BACK_MESSAGE, 20),
      at("failed", INTERRUPTED_MESSAGE, 30),
    ]);
    expect(runs.map((run) => [run.attempt, run.startedBy, run.ended])).toEqual([
      [1, "created", "lost"],
      [2, "re-run", "drained"],
      [3, "resumed", "lost"],
    ]);
  });
  it("a cluster: each run names the worker its entries name; a re-queue's worker is the lost run's, not the next one's", () => {
    const on = (change: StatusChange, node: string): StatusChange => ({ ...change, node });
    const runs = runsOf([
      at("working", null, 0),
      on(at("input_required", "ask", 4), "worker-a"),
      on(at("working", REQUEUED, 20), "worker-a"),
      on(at("completed", null, 30), "worker-b"),
    ]);
    expect(runs.map((run) => [run.attempt, run.ended, run.node])).toEqual([
      [1, "lost", "worker-a"],
      [2, "finished", "worker-b"],
    ]);
  });

  it("a run no worker has written for yet names no node", () => {
    const runs = runsOf([at("working", null, 0), { ...at("working", REQUEUED, 20), node: "worker-a" }]);
    expect(runs.map((run) => run.node)).toEqual(["worker-a", null]);
  });
});
