/**
 * The order of a run's progress writes: one in flight, the newest report behind it, so the last
 * report made is the last one stored, and the run can wait for it.
 */
import { describe, expect, it } from "vitest";
import type { TaskProgress } from "../../src/core/task.js";
import { ProgressWriter } from "../../src/runtime/progress-writer.js";
import { deferred } from "../support/conformance.js";

describe("ProgressWriter", () => {
  it("writes one report at a time and, behind a slow write, only the newest report", async () => {
    const written: number[] = [];
    const slow = deferred();
    const writer = new ProgressWriter(async (report: TaskProgress) => {
      if (report.progress === 1) await slow.promise;
      written.push(report.progress);
    });
    for (const progress of [1, 2, 3, 4]) writer.report({ progress, total: 4 });
    let settled = false;
    const waiting = writer.settled().then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(settled).toBe(false);
    slow.resolve();
    await waiting;
    expect(written).toEqual([1, 4]);
  });

  it("keeps writing after a write that rejects, and settles", async () => {
    const written: number[] = [];
    const writer = new ProgressWriter(async (report: TaskProgress) => {
      if (report.progress === 1) throw new Error("lost connection");
      written.push(report.progress);
    });
    writer.report({ progress: 1 });
    writer.report({ progress: 2 });
    await writer.settled();
    expect(written).toEqual([2]);
  });

  it("is settled at once when nothing was reported", async () => {
    await expect(new ProgressWriter(async () => {}).settled()).resolves.toBeUndefined();
  });
});
