import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import {
  callToolAsTask,
  cancelTask,
  captureLogger,
  deferred,
  expectRpcError,
  getTask,
  ISO_8601,
  probeTool,
  rpcError,
  taskResult,
  track,
  watchStatuses,
  type Probe,
} from "../../support/conformance.js";

import { memoryStore } from "../../../src/store/memory/memory-store.js";
import type { ClaimCaps } from "../../../src/store/run-queue.js";
import type { TaskStore } from "../../../src/store/task-store.js";
import type { ConformanceFixture } from "../../support/conformance-fixtures.js";
import { on, STREAMING, useFixture, type ConformancePath } from "./paths.js";

export function cancelSuite(path: ConformancePath): void {
  const start = useFixture(path);
  const streaming = on(path, STREAMING);
  let fx: ConformanceFixture | undefined;

  /** tasks/result of a cancelled task: -32800 (documented in src/core/errors.ts and docs/errors.md). */
  const TASK_CANCELLED = -32800;

  describe("T-CANCEL: cancellation", () => {
    it("T-CANCEL-1: tasks/cancel returns the Task, now cancelled", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 60_000 }, { ttl: 30_000 });
      const cancelled = await cancelTask(fx.client, task.taskId);
      expect(cancelled).toMatchObject({ taskId: task.taskId, status: "cancelled", ttl: 30_000, createdAt: task.createdAt });
      expect(cancelled.lastUpdatedAt).toMatch(ISO_8601);
    });

    // Streaming paths only: it needs status notifications.
    streaming("T-CANCEL-3: the task is cancelled before the tasks/cancel response is sent", async () => {
      fx = await start();
      const statuses = watchStatuses(fx.client);
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 60_000 });
      await cancelTask(fx.client, task.taskId);
      expect((await getTask(fx.client, task.taskId)).status).toBe("cancelled");
      await statuses.until(task.taskId, "cancelled");
    });

    it("T-CANCEL-3: a valid cancel aborts the handler's signal", async () => {
      let probe!: Probe;
      fx = await start({ setup: (app) => (probe = probeTool(app, "probe")) });
      const { task } = await callToolAsTask(fx.client, "probe", {});
      const ctx = await probe.started;
      expect(ctx.signal.aborted).toBe(false);
      await cancelTask(fx.client, task.taskId);
      expect(await probe.aborted).toBe("cancelled");
      probe.finish();
    });

    // Streaming paths only: it needs progress notifications.
    streaming("T-CANCEL-3: a cancelled sleep stops instead of running to its end", async () => {
      const logger = captureLogger();
      fx = await start({ logger });
      const running = deferred<void>();
      // Progress proves the handler is running: 10 000 steps over ten minutes, one every 60 ms.
      const { task } = await callToolAsTask(
        fx.client,
        "sleep",
        { ms: 600_000, steps: 10_000 },
        {},
        { onprogress: () => running.resolve() },
      );
      await running.promise;
      await cancelTask(fx.client, task.taskId);
      // The handler ends (its sleep rejected on abort) long before its ten minutes.
      const ended = await logger.until((e) => e.msg === "handler ended after abort" && e.obj["taskId"] === task.taskId);
      expect(ended.obj["reason"]).toBe("cancelled");
    });

    it("T-CANCEL-3: a task cancelled before its handler started never runs it", async () => {
      // The claim that takes the task for its handler is held, after it marked the task started
      // and before its answer reaches the engine, until the cancel is through: on every path
      // (however long its round trips) the cancel lands between the claim and the handler's start.
      const store = memoryStore();
      const checking = deferred<void>();
      const release = deferred<void>();
      let hold = true;
      const held: TaskStore = {
        ...store,
        claimRunnable: async (limit: number, now: number, caps: ClaimCaps) => {
          const claimed = await store.claimRunnable(limit, now, caps);
          if (hold && claimed.length > 0) {
            hold = false;
            checking.resolve();
            await release.promise;
          }
          return claimed;
        },
      } as TaskStore;
      let probe!: Probe;
      fx = await start({ store: held, setup: (app) => (probe = probeTool(app, "probe")) });
      const { task } = await callToolAsTask(fx.client, "probe", {});
      await checking.promise;
      await cancelTask(fx.client, task.taskId);
      release.resolve();
      // Let the engine run what it scheduled: a later task runs to completion after this one would have started.
      const later = await callToolAsTask(fx.client, "sleep", { ms: 0 });
      await taskResult(fx.client, later.task.taskId);
      expect(probe.calls).toBe(0);
      expect((await getTask(fx.client, task.taskId)).status).toBe("cancelled");
    });

    // Streaming paths only: it needs status notifications.
    // `sample` cannot be replayed, so its handler waits in memory for the answer (a replayable
    // tool's is parked: nothing of it runs, so there is nothing to abort — the next test).
    streaming("T-CANCEL-3: cancelling an input_required task aborts the handler's pending request to the requestor", async () => {
      const logger = captureLogger();
      fx = await start({ logger });
      const statuses = watchStatuses(fx.client);
      const { task } = await callToolAsTask(fx.client, "sample", { prompt: "still there?" });
      await statuses.until(task.taskId, "input_required");
      const cancelled = await cancelTask(fx.client, task.taskId);
      expect(cancelled.status).toBe("cancelled");
      await logger.until((e) => e.msg === "handler ended after abort" && e.obj["taskId"] === task.taskId);
      expect((await getTask(fx.client, task.taskId)).status).toBe("cancelled");
    });

    streaming("T-CANCEL-3: cancelling a parked input_required task leaves nothing to run: it is never replayed", async () => {
      const logger = captureLogger();
      fx = await start({ logger });
      const statuses = watchStatuses(fx.client);
      const { task } = await callToolAsTask(fx.client, "ask", { question: "still there?" });
      await statuses.until(task.taskId, "input_required");
      await logger.until((e) => String(e.msg).startsWith("task parked") && e.obj["taskId"] === task.taskId);
      expect((await cancelTask(fx.client, task.taskId)).status).toBe("cancelled");
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await getTask(fx.client, task.taskId)).status).toBe("cancelled");
      // Run once (parked), never replayed: a replay would have asked again and parked again.
      expect(
        logger.entries.filter((e) => e.obj["taskId"] === task.taskId && String(e.msg).startsWith("task parked: nothing")),
      ).toHaveLength(1);
    });

    it("T-CANCEL-4: a cancelled task stays cancelled when its handler later completes", async () => {
      const logger = captureLogger();
      let probe!: Probe;
      fx = await start({ logger, setup: (app) => (probe = probeTool(app, "probe")) });
      const { task } = await callToolAsTask(fx.client, "probe", {});
      await probe.started;
      const cancelled = await cancelTask(fx.client, task.taskId);
      probe.finish({ content: [{ type: "text", text: "late success" }] });
      await logger.until((e) => e.msg === "late outcome dropped: task already terminal" && e.obj["taskId"] === task.taskId);
      const got = await getTask(fx.client, task.taskId);
      expect(got.status).toBe("cancelled");
      expect(got.statusMessage).toBe(cancelled.statusMessage);
      expect(got.lastUpdatedAt).toBe(cancelled.lastUpdatedAt);
      await expectRpcError(taskResult(fx.client, task.taskId), TASK_CANCELLED);
    });

    it("T-CANCEL-4: a cancelled task stays cancelled when its handler later returns an isError result", async () => {
      const logger = captureLogger();
      let probe!: Probe;
      fx = await start({ logger, setup: (app) => (probe = probeTool(app, "probe")) });
      const { task } = await callToolAsTask(fx.client, "probe", {});
      await probe.started;
      await cancelTask(fx.client, task.taskId);
      probe.finish({ content: [{ type: "text", text: "late failure" }], isError: true });
      await logger.until((e) => e.msg === "late outcome dropped: task already terminal" && e.obj["taskId"] === task.taskId);
      const got = await getTask(fx.client, task.taskId);
      expect(got.status).toBe("cancelled");
      expect(got.statusMessage).not.toBe("late failure");
    });

    it("T-CANCEL-4: a cancelled task stays cancelled when its handler later throws", async () => {
      let probe!: Probe;
      fx = await start({ setup: (app) => (probe = probeTool(app, "probe")) });
      const { task } = await callToolAsTask(fx.client, "probe", {});
      await probe.started;
      await cancelTask(fx.client, task.taskId);
      probe.fail(new McpError(-32001, "late error"));
      await probe.returned;
      const got = await getTask(fx.client, task.taskId);
      expect(got.status).toBe("cancelled");
      const error = await expectRpcError(taskResult(fx.client, task.taskId), TASK_CANCELLED);
      expect(error.message).not.toContain("late error");
    });

    it("T-CANCEL-4: the dropped late outcome is logged, not thrown into the handler or reported as an error", async () => {
      const logger = captureLogger();
      let probe!: Probe;
      fx = await start({ logger, setup: (app) => (probe = probeTool(app, "probe")) });
      const { task } = await callToolAsTask(fx.client, "probe", {});
      await probe.started;
      await cancelTask(fx.client, task.taskId);
      probe.finish();
      await probe.returned;
      const dropped = await logger.until((e) => e.msg === "late outcome dropped: task already terminal");
      expect(dropped.obj).toMatchObject({ taskId: task.taskId, dropped: "completed" });
      expect(logger.entries.filter((e) => e.level === "error")).toEqual([]);
    });

    it("T-CANCEL-2: cancelling a completed task is rejected with -32602", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 1 });
      await taskResult(fx.client, task.taskId);
      await expectRpcError(cancelTask(fx.client, task.taskId), -32602, "Cannot cancel task: already in terminal status 'completed'");
      expect((await getTask(fx.client, task.taskId)).status).toBe("completed");
    });

    it("T-CANCEL-2: cancelling a failed task is rejected with -32602", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "fail", { message: "x" });
      await taskResult(fx.client, task.taskId);
      await expectRpcError(cancelTask(fx.client, task.taskId), -32602, "Cannot cancel task: already in terminal status 'failed'");
    });

    it("T-CANCEL-2: cancelling an already cancelled task is rejected with -32602", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 60_000 });
      await cancelTask(fx.client, task.taskId);
      await expectRpcError(cancelTask(fx.client, task.taskId), -32602, "Cannot cancel task: already in terminal status 'cancelled'");
    });

    it("T-CANCEL-2: of two concurrent cancels exactly one succeeds, the other gets -32602", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 60_000 });
      const outcomes = await Promise.allSettled([cancelTask(fx.client, task.taskId), cancelTask(fx.client, task.taskId)]);
      const ok = outcomes.filter((o) => o.status === "fulfilled");
      const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === "rejected");
      expect(ok).toHaveLength(1);
      expect(refused).toHaveLength(1);
      expect((refused[0]?.reason as McpError).code).toBe(-32602);
    });

    it("T-CANCEL-4/T-LIFE-3: a cancel racing the handler's own end leaves one consistent final state", async () => {
      let probe!: Probe;
      fx = await start({ setup: (app) => (probe = probeTool(app, "probe")) });
      const { task } = await callToolAsTask(fx.client, "probe", {});
      await probe.started;
      probe.finish();
      const cancel = await cancelTask(fx.client, task.taskId).then(
        () => "cancelled" as const,
        (error: McpError) => error,
      );
      await probe.returned;
      const final = await getTask(fx.client, task.taskId);
      if (cancel === "cancelled") {
        expect(final.status).toBe("cancelled");
        await expectRpcError(taskResult(fx.client, task.taskId), TASK_CANCELLED);
      } else {
        expect(cancel.code).toBe(-32602);
        expect(final.status).toBe("completed");
        expect((await taskResult(fx.client, task.taskId)).content).toEqual([{ type: "text", text: "done" }]);
      }
    });

    it("T-RES-2: tasks/result of a cancelled task is a JSON-RPC error saying it was cancelled (-32800)", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 60_000 });
      await cancelTask(fx.client, task.taskId);
      const error = await expectRpcError(taskResult(fx.client, task.taskId), TASK_CANCELLED, /cancelled/i);
      expect(error.data).toEqual({ taskId: task.taskId });
    });

    it("T-RES-3: a tasks/result blocked on a task is answered with the cancelled error when the task is cancelled", async () => {
      fx = await start();
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 60_000 });
      const pending = track(rpcError(taskResult(fx.client, task.taskId)));
      await getTask(fx.client, task.taskId);
      expect(pending.settled()).toBe(false);
      await cancelTask(fx.client, task.taskId);
      expect((await pending.promise).code).toBe(TASK_CANCELLED);
    });

    it("T-CANCEL-1: a task can be cancelled by id from another session of the (unauthenticated) requestor", async () => {
      fx = await start();
      const other = await fx.connectClient();
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 60_000 });
      expect((await cancelTask(other, task.taskId)).status).toBe("cancelled");
      expect((await getTask(fx.client, task.taskId)).status).toBe("cancelled");
    });
  });
}
