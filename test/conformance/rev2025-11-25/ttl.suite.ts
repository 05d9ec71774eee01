import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import {
  callToolAsTask,
  cancelTask,
  expectRpcError,
  getTask,
  ISO_8601,
  listAllTasks,
  probeTool,
  rpcError,
  taskResult,
  track,
  watchStatuses,
  type Probe,
} from "../../support/conformance.js";
import type { FixtureOptions } from "../../support/in-memory-fixture.js";
import type { ConformanceFixture } from "../../support/conformance-fixtures.js";
import { on, STREAMING, useFixture, type ConformancePath } from "./paths.js";

export function ttlSuite(path: ConformancePath): void {
  const start = useFixture(path);
  const streaming = on(path, STREAMING);
  let fx: ConformanceFixture | undefined;

  const T0 = Date.parse("2031-03-04T05:06:07.089Z");
  const HOUR = 3_600_000;

  /** A fixture on a fake clock whose sweeper only runs when the test calls `engine.sweep()`. */
  async function clockFixture(options: FixtureOptions = {}) {
    let now = T0;
    fx = await start({ now: () => now, sweepIntervalMs: HOUR, ...options });
    return {
      fx,
      advance(ms: number) {
        now += ms;
      },
    };
  }

  describe("T-TTL: timestamps and ttl", () => {
    // Streaming paths only: it needs status notifications.
    streaming(
      "T-TTL-1/T-TTL-2: CreateTaskResult, tasks/get, tasks/list, tasks/cancel and status notifications carry ISO 8601 createdAt and lastUpdatedAt",
      async () => {
        const { advance } = await clockFixture();
        const statuses = watchStatuses(fx!.client);
        const { task } = await callToolAsTask(fx!.client, "sleep", { ms: 600_000 });
        advance(250);
        const got = await getTask(fx!.client, task.taskId);
        const [listed] = await listAllTasks(fx!.client);
        const cancelled = await cancelTask(fx!.client, task.taskId);
        const note = await statuses.until(task.taskId, "cancelled");
        for (const t of [task, got, listed!, cancelled, note]) {
          expect(t.createdAt).toMatch(ISO_8601);
          expect(t.lastUpdatedAt).toMatch(ISO_8601);
          expect(t.createdAt).toBe("2031-03-04T05:06:07.089Z");
        }
        expect(cancelled.lastUpdatedAt).toBe("2031-03-04T05:06:07.339Z");
      },
    );

    it("T-TTL-4: tasks/get carries the actual ttl, the requested one when it is within the limits", async () => {
      await clockFixture();
      const { task } = await callToolAsTask(fx!.client, "sleep", { ms: 1 }, { ttl: 123_456 });
      expect(task.ttl).toBe(123_456);
      expect((await getTask(fx!.client, task.taskId)).ttl).toBe(123_456);
    });

    it("T-TTL-3/T-TTL-7: a requested ttl above the maximum is capped to the maximum", async () => {
      await clockFixture({ ttl: { maxTtlMs: 10_000 } });
      const { task } = await callToolAsTask(fx!.client, "sleep", { ms: 1 }, { ttl: 99_999 });
      expect(task.ttl).toBe(10_000);
      expect((await getTask(fx!.client, task.taskId)).ttl).toBe(10_000);
    });

    it("T-TTL-3/T-TTL-7: by default the maximum ttl is 24 hours", async () => {
      await clockFixture();
      const { task } = await callToolAsTask(fx!.client, "sleep", { ms: 1 }, { ttl: 365 * 24 * HOUR });
      expect(task.ttl).toBe(24 * HOUR);
    });

    it("T-TTL-3: a requested ttl below the minimum is raised to the minimum (1 s by default)", async () => {
      await clockFixture();
      const { task } = await callToolAsTask(fx!.client, "sleep", { ms: 1 }, { ttl: 5 });
      expect(task.ttl).toBe(1000);
    });

    it("T-TTL-3: a fractional ttl is rounded down to whole milliseconds", async () => {
      await clockFixture();
      const { task } = await callToolAsTask(fx!.client, "sleep", { ms: 1 }, { ttl: 1500.9 });
      expect(task.ttl).toBe(1500);
    });

    it("T-TTL-3: a task requested without a ttl gets the configured default", async () => {
      await clockFixture({ ttl: { defaultTtlMs: 120_000 } });
      const { task } = await callToolAsTask(fx!.client, "sleep", { ms: 1 });
      expect(task.ttl).toBe(120_000);
    });

    it("T-TTL-3/T-TTL-7: a configured default above the maximum ttl is capped to the maximum", async () => {
      await clockFixture({ ttl: { defaultTtlMs: 100_000, maxTtlMs: 2_000 } });
      const { task } = await callToolAsTask(fx!.client, "sleep", { ms: 1 });
      expect(task.ttl).toBe(2_000);
    });

    it("T-TTL-3: a configured default below the minimum ttl is raised to the minimum, so a task can still be fetched", async () => {
      await clockFixture({ ttl: { defaultTtlMs: 0 } });
      const { task } = await callToolAsTask(fx!.client, "sleep", { ms: 1 });
      expect(task.ttl).toBe(1_000);
      expect((await getTask(fx!.client, task.taskId)).status).not.toBe("expired");
    });

    it("T-TTL-3: by default a task requested without a ttl lives one hour", async () => {
      await clockFixture();
      const { task } = await callToolAsTask(fx!.client, "sleep", { ms: 1 });
      expect(task.ttl).toBe(HOUR);
    });

    it("T-TTL-4: an unlimited lifetime is reported as ttl null", async () => {
      await clockFixture({ ttl: { defaultTtlMs: null, maxTtlMs: null } });
      const { task } = await callToolAsTask(fx!.client, "sleep", { ms: 1 });
      expect(task.ttl).toBeNull();
      expect((await getTask(fx!.client, task.taskId)).ttl).toBeNull();
    });

    it("T-TTL-6: tasks carry the configured pollInterval", async () => {
      await clockFixture({ pollIntervalMs: 2_500 });
      const { task } = await callToolAsTask(fx!.client, "sleep", { ms: 1 });
      expect(task.pollInterval).toBe(2_500);
      expect((await getTask(fx!.client, task.taskId)).pollInterval).toBe(2_500);
    });

    it("T-TTL-6: with no poll interval configured, tasks carry none", async () => {
      await clockFixture({ pollIntervalMs: null });
      const { task } = await callToolAsTask(fx!.client, "sleep", { ms: 1 });
      expect(task).not.toHaveProperty("pollInterval");
      expect(await getTask(fx!.client, task.taskId)).not.toHaveProperty("pollInterval");
    });
  });

  describe("T-TTL-5/T-ERR-7: expiry", () => {
    it("T-ERR-7: after its ttl a finished task answers tasks/get with -32602 'Task has expired'", async () => {
      const { advance } = await clockFixture();
      const { task } = await callToolAsTask(fx!.client, "sleep", { ms: 0 }, { ttl: 5_000 });
      await taskResult(fx!.client, task.taskId);
      advance(5_000);
      await expectRpcError(getTask(fx!.client, task.taskId), -32602, "Failed to retrieve task: Task has expired");
    });

    it("T-ERR-7: after its ttl a finished task answers tasks/result and tasks/cancel with -32602", async () => {
      const { advance } = await clockFixture();
      const { task } = await callToolAsTask(fx!.client, "sleep", { ms: 0 }, { ttl: 5_000 });
      await taskResult(fx!.client, task.taskId);
      advance(5_001);
      await expectRpcError(taskResult(fx!.client, task.taskId), -32602, /expired/);
      await expectRpcError(cancelTask(fx!.client, task.taskId), -32602, /expired/);
    });

    it("T-TTL-5/T-ERR-7: once swept, an expired task still answers 'Task has expired' while its id is remembered", async () => {
      const { advance } = await clockFixture();
      const { task } = await callToolAsTask(fx!.client, "sleep", { ms: 0 }, { ttl: 5_000 });
      await taskResult(fx!.client, task.taskId);
      advance(6_000);
      await fx!.app.engine.sweep();
      expect(await fx!.app.engine.store.get(task.taskId, { any: true })).toBeNull();
      await expectRpcError(getTask(fx!.client, task.taskId), -32602, "Failed to retrieve task: Task has expired");
      await expectRpcError(taskResult(fx!.client, task.taskId), -32602, /expired/);
    });

    it("T-TTL-5/T-ERR-7: a swept task is 'not found' once its id is no longer remembered", async () => {
      const { advance } = await clockFixture({ rememberExpiredMs: 60_000 });
      const { task } = await callToolAsTask(fx!.client, "sleep", { ms: 0 }, { ttl: 5_000 });
      await taskResult(fx!.client, task.taskId);
      advance(6_000);
      await fx!.app.engine.sweep();
      advance(60_000);
      await fx!.app.engine.sweep();
      await expectRpcError(getTask(fx!.client, task.taskId), -32602, "Failed to retrieve task: Task not found");
      await expectRpcError(taskResult(fx!.client, task.taskId), -32602, /not found/);
    });

    it("T-TTL-5: the lifetime counts from createdAt, not from the task's end", async () => {
      let probe!: Probe;
      const { advance } = await clockFixture({ setup: (app) => (probe = probeTool(app, "probe")) });
      const { task } = await callToolAsTask(fx!.client, "probe", {}, { ttl: 10_000 });
      await probe.started;
      advance(9_000);
      probe.finish();
      await taskResult(fx!.client, task.taskId);
      advance(999);
      expect((await getTask(fx!.client, task.taskId)).status).toBe("completed");
      advance(1);
      await expectRpcError(getTask(fx!.client, task.taskId), -32602, /expired/);
    });

    it("T-TTL-5/T-LIST-4: an expired task is no longer listed", async () => {
      const { advance } = await clockFixture();
      const short = (await callToolAsTask(fx!.client, "sleep", { ms: 0 }, { ttl: 2_000 })).task.taskId;
      const long = (await callToolAsTask(fx!.client, "sleep", { ms: 0 }, { ttl: 60_000 })).task.taskId;
      await taskResult(fx!.client, short);
      await taskResult(fx!.client, long);
      advance(2_000);
      expect((await listAllTasks(fx!.client)).map((t) => t.taskId)).toEqual([long]);
      await fx!.app.engine.sweep();
      expect((await listAllTasks(fx!.client)).map((t) => t.taskId)).toEqual([long]);
    });

    // Streaming paths only: it needs status notifications.
    streaming("T-TTL-7: a task still running at expiry is failed with a statusMessage saying so, and its handler is aborted", async () => {
      let probe!: Probe;
      const { advance } = await clockFixture({ setup: (app) => (probe = probeTool(app, "probe")) });
      const statuses = watchStatuses(fx!.client);
      const { task } = await callToolAsTask(fx!.client, "probe", {}, { ttl: 3_000 });
      await probe.started;
      advance(3_000);
      await fx!.app.engine.sweep();
      expect(await probe.aborted).toBe("expired");
      const failed = await statuses.until(task.taskId, "failed");
      expect(failed.statusMessage).toMatch(/expired/i);
      expect(failed.statusMessage).toMatch(/3000 ms/);
      probe.finish();
      await probe.returned;
      await expectRpcError(getTask(fx!.client, task.taskId), -32602);
    });

    it("T-TTL-7: a tasks/result blocked on a task that expires is answered with -32602, not left hanging", async () => {
      let probe!: Probe;
      const { advance } = await clockFixture({ setup: (app) => (probe = probeTool(app, "probe")) });
      const { task } = await callToolAsTask(fx!.client, "probe", {}, { ttl: 3_000 });
      await probe.started;
      const pending = track(rpcError(taskResult(fx!.client, task.taskId)));
      await getTask(fx!.client, task.taskId);
      expect(pending.settled()).toBe(false);
      advance(3_000);
      await fx!.app.engine.sweep();
      const error = await pending.promise;
      expect(error.code).toBe(-32602);
      probe.finish();
    });

    // Streaming paths only: it needs status notifications.
    streaming("T-TTL-7: the sweeper runs on its own, at the configured interval", async () => {
      let probe!: Probe;
      const { advance } = await clockFixture({ sweepIntervalMs: 20, setup: (app) => (probe = probeTool(app, "probe")) });
      const statuses = watchStatuses(fx!.client);
      const { task } = await callToolAsTask(fx!.client, "probe", {}, { ttl: 1_000 });
      await probe.started;
      advance(1_000);
      expect(await probe.aborted).toBe("expired");
      await statuses.until(task.taskId, "failed");
      probe.finish();
    });

    // Streaming paths only: it needs status notifications and to answer the server's requests.
    streaming("T-TTL-7: an expired task's queued requests are swept with it and never delivered", async () => {
      const { advance } = await clockFixture();
      const statuses = watchStatuses(fx!.client);
      let asked = 0;
      fx!.client.setRequestHandler(ElicitRequestSchema, async () => {
        asked++;
        return { action: "accept", content: { answer: "late" } };
      });
      const { task } = await callToolAsTask(fx!.client, "ask", { question: "?" }, { ttl: 2_000 });
      await statuses.until(task.taskId, "input_required");
      expect(await fx!.app.engine.store.pendingInputs(task.taskId)).toHaveLength(1);
      advance(2_000);
      await fx!.app.engine.sweep();
      expect(await fx!.app.engine.store.pendingInputs(task.taskId)).toEqual([]);
      await expectRpcError(taskResult(fx!.client, task.taskId), -32602, /expired/);
      expect(asked).toBe(0);
    });

    it("T-TTL-5: tasks with an unlimited ttl never expire", async () => {
      const { advance } = await clockFixture({ ttl: { defaultTtlMs: null } });
      const { task } = await callToolAsTask(fx!.client, "sleep", { ms: 0 });
      await taskResult(fx!.client, task.taskId);
      advance(10 * 365 * 24 * HOUR);
      await fx!.app.engine.sweep();
      expect((await getTask(fx!.client, task.taskId)).status).toBe("completed");
    });
  });

  describe("T-TTL-7: resource limits", () => {
    it("T-TTL-7: a requestor's concurrent tasks are limited; one more is refused with -32600 and creates nothing", async () => {
      await clockFixture({ maxActivePerOwner: 2 });
      await callToolAsTask(fx!.client, "sleep", { ms: 600_000 });
      await callToolAsTask(fx!.client, "sleep", { ms: 600_000 });
      await expectRpcError(callToolAsTask(fx!.client, "sleep", { ms: 600_000 }), -32600, /at most 2/);
      expect(await listAllTasks(fx!.client)).toHaveLength(2);
    });

    it("T-TTL-7: once a task ends, the requestor may create another", async () => {
      await clockFixture({ maxActivePerOwner: 1 });
      const first = await callToolAsTask(fx!.client, "sleep", { ms: 600_000 });
      await rpcError(callToolAsTask(fx!.client, "sleep", { ms: 0 }));
      await cancelTask(fx!.client, first.task.taskId);
      const second = await callToolAsTask(fx!.client, "sleep", { ms: 0 });
      expect(second.task.status).toBe("working");
    });
  });
}
