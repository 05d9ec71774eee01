import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import {
  AnyResultSchema,
  callToolAsTask,
  cancelTask,
  expectRpcError,
  getTask,
  listAllTasks,
  listTasks,
  taskResult,
  watchStatuses,
} from "../../support/conformance.js";

import type { TaskServerOptions } from "../../../src/mcp/task-server.js";
import type { ConformanceFixture } from "../../support/conformance-fixtures.js";
import { on, STREAMING, useFixture, type ConformancePath } from "./paths.js";

export function listSuite(path: ConformancePath): void {
  const start = useFixture(path);
  const streaming = on(path, STREAMING);
  let fx: ConformanceFixture | undefined;

  const T0 = Date.parse("2030-06-01T12:00:00.000Z");

  /** A fixture with a fake clock that moves 1 ms per created task, so creation order is list order. */
  async function pagedFixture(pageSize: number, options: Partial<TaskServerOptions> = {}) {
    let now = T0;
    fx = await start({ pageSize, now: () => now, ...options });
    const create = async (count: number): Promise<string[]> => {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        now += 1;
        ids.push((await callToolAsTask(fx!.client, "sleep", { ms: 600_000 })).task.taskId);
      }
      return ids;
    };
    return { fx, create, advance: (ms: number) => (now += ms) };
  }

  describe("T-LIST: listing", () => {
    it("T-LIST-1: tasks/list returns {tasks} holding the requestor's tasks as full Task objects", async () => {
      fx = await start({ pollIntervalMs: 700 });
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 60_000 }, { ttl: 50_000 });
      const page = await listTasks(fx.client);
      expect(page.tasks).toEqual([
        {
          taskId: task.taskId,
          status: "working",
          createdAt: task.createdAt,
          lastUpdatedAt: task.lastUpdatedAt,
          ttl: 50_000,
          pollInterval: 700,
        },
      ]);
    });

    it("T-LIST-1: with no tasks, tasks/list returns an empty list and no nextCursor", async () => {
      fx = await start();
      const page = await fx.client.request({ method: "tasks/list", params: {} }, AnyResultSchema);
      expect(page).toEqual({ tasks: [] });
    });

    it("T-LIST-1: tasks/list accepts a request without params", async () => {
      fx = await start();
      await callToolAsTask(fx.client, "sleep", { ms: 60_000 });
      const page = await fx.client.request({ method: "tasks/list" }, AnyResultSchema);
      expect(page["tasks"]).toHaveLength(1);
    });

    it("T-LIST-2: pages are bounded by the page size and carry nextCursor while more tasks exist", async () => {
      const { create } = await pagedFixture(2);
      const ids = await create(5);
      const first = await listTasks(fx!.client);
      expect(first.tasks.map((t) => t.taskId)).toEqual(ids.slice(0, 2));
      expect(first.nextCursor).toEqual(expect.any(String));
      const second = await listTasks(fx!.client, first.nextCursor);
      expect(second.tasks.map((t) => t.taskId)).toEqual(ids.slice(2, 4));
      expect(second.nextCursor).toEqual(expect.any(String));
      const third = await listTasks(fx!.client, second.nextCursor);
      expect(third.tasks.map((t) => t.taskId)).toEqual(ids.slice(4));
      expect(third.nextCursor).toBeUndefined();
    });

    it("T-LIST-2: exactly one full page of tasks gets no nextCursor", async () => {
      const { create } = await pagedFixture(3);
      const ids = await create(3);
      const page = await listTasks(fx!.client);
      expect(page.tasks.map((t) => t.taskId)).toEqual(ids);
      expect(page.nextCursor).toBeUndefined();
    });

    it("T-LIST-2: one task more than a page gets a nextCursor leading to it", async () => {
      const { create } = await pagedFixture(3);
      const ids = await create(4);
      const first = await listTasks(fx!.client);
      expect(first.nextCursor).toBeDefined();
      const second = await listTasks(fx!.client, first.nextCursor);
      expect(second.tasks.map((t) => t.taskId)).toEqual([ids[3]]);
      expect(second.nextCursor).toBeUndefined();
    });

    it("T-LIST-2: walking the pages yields every task exactly once, in creation order", async () => {
      const { create } = await pagedFixture(3);
      const ids = await create(10);
      expect((await listAllTasks(fx!.client)).map((t) => t.taskId)).toEqual(ids);
    });

    it("T-LIST-2: tasks created while a requestor pages are neither skipped nor repeated (keyset pagination)", async () => {
      const { create } = await pagedFixture(2);
      const before = await create(3);
      const first = await listTasks(fx!.client);
      const after = await create(2);
      const seen = first.tasks.map((t) => t.taskId);
      let cursor = first.nextCursor;
      while (cursor !== undefined) {
        const page = await listTasks(fx!.client, cursor);
        seen.push(...page.tasks.map((t) => t.taskId));
        cursor = page.nextCursor;
      }
      expect(seen).toEqual([...before, ...after]);
    });

    it("T-LIST-2: a cursor stays valid after the task it points past has been deleted", async () => {
      const { create, advance } = await pagedFixture(2);
      const ids = await create(1);
      // The second task has a short ttl and will be swept between pages.
      advance(1);
      const short = (await callToolAsTask(fx!.client, "sleep", { ms: 600_000 }, { ttl: 1000 })).task.taskId;
      ids.push(...(await create(2)));
      const first = await listTasks(fx!.client);
      expect(first.tasks.map((t) => t.taskId)).toEqual([ids[0], short]);
      advance(5_000);
      await fx!.app.engine.sweep();
      const rest = await listTasks(fx!.client, first.nextCursor);
      expect(rest.tasks.map((t) => t.taskId)).toEqual(ids.slice(1));
    });

    it("T-LIST-3: a cursor is an opaque string, usable from another session of the same requestor", async () => {
      const { create } = await pagedFixture(2);
      const ids = await create(3);
      const first = await listTasks(fx!.client);
      const other = await fx!.connectClient();
      const second = await listTasks(other, first.nextCursor);
      expect(second.tasks.map((t) => t.taskId)).toEqual([ids[2]]);
    });

    it("T-LIST-3/T-ERR-2: a cursor whose signature was altered is rejected with -32602", async () => {
      const { create } = await pagedFixture(1);
      await create(2);
      const { nextCursor } = await listTasks(fx!.client);
      const [body, mac] = String(nextCursor).split(".");
      const flipped = `${mac!.slice(0, 5)}${mac![5] === "A" ? "B" : "A"}${mac!.slice(6)}`;
      await expectRpcError(listTasks(fx!.client, `${body}.${flipped}`), -32602, "Invalid cursor");
    });

    it("T-LIST-3/T-ERR-2: changing any single character of a cursor makes it invalid (-32602)", async () => {
      // Every altered cursor is a failed lookup: past 20 the T-SEC-4 guard would answer -32029
      // instead (test/security/rate-limit.test.ts), which is not what this test is about.
      const { create } = await pagedFixture(1, { failedLookups: "off" });
      await create(2);
      const cursor = String((await listTasks(fx!.client)).nextCursor);
      for (let i = 0; i < cursor.length; i++) {
        const altered = `${cursor.slice(0, i)}${cursor[i] === "A" ? "B" : "A"}${cursor.slice(i + 1)}`;
        await expectRpcError(listTasks(fx!.client, altered), -32602, "Invalid cursor");
      }
    });

    it("T-LIST-3/T-ERR-2: a cursor whose signature is spelled differently but decodes to the same bytes is rejected", async () => {
      const { create } = await pagedFixture(1);
      await create(2);
      const cursor = String((await listTasks(fx!.client)).nextCursor);
      // A 32-byte MAC is 43 base64url characters; the low 2 bits of the last one are unused.
      const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
      const last = alphabet.indexOf(cursor.at(-1)!);
      const respelled = cursor.slice(0, -1) + alphabet[last ^ 1];
      expect(Buffer.from(respelled.split(".")[1]!, "base64url")).toEqual(Buffer.from(cursor.split(".")[1]!, "base64url"));
      await expectRpcError(listTasks(fx!.client, respelled), -32602, "Invalid cursor");
    });

    it("T-LIST-3/T-ERR-2: a cursor whose position was rewritten is rejected with -32602", async () => {
      const { create } = await pagedFixture(1);
      await create(3);
      const { nextCursor } = await listTasks(fx!.client);
      const [, mac] = String(nextCursor).split(".");
      const forged = Buffer.from(JSON.stringify([0, ""])).toString("base64url");
      await expectRpcError(listTasks(fx!.client, `${forged}.${mac}`), -32602, /cursor/i);
    });

    it("T-ERR-2: a made-up cursor is rejected with -32602", async () => {
      fx = await start();
      await expectRpcError(listTasks(fx.client, "page-2"), -32602, "Invalid cursor");
    });

    // Streaming paths only: it needs status notifications and to answer the server's requests.
    streaming("T-LIST-4: every task tasks/get can retrieve is also in tasks/list, whatever its status", async () => {
      fx = await start({ pageSize: 2 });
      const statuses = watchStatuses(fx.client);
      fx.client.setRequestHandler(ElicitRequestSchema, () => new Promise(() => {}));
      const working = (await callToolAsTask(fx.client, "sleep", { ms: 600_000 })).task.taskId;
      const completed = (await callToolAsTask(fx.client, "sleep", { ms: 0 })).task.taskId;
      const failed = (await callToolAsTask(fx.client, "fail", { message: "f" })).task.taskId;
      const errored = (await callToolAsTask(fx.client, "throw", { code: -32020, message: "t" })).task.taskId;
      const cancelled = (await callToolAsTask(fx.client, "sleep", { ms: 600_000 })).task.taskId;
      const waiting = (await callToolAsTask(fx.client, "ask", { question: "?" })).task.taskId;
      await cancelTask(fx.client, cancelled);
      await taskResult(fx.client, completed);
      await taskResult(fx.client, failed);
      await taskResult(fx.client, errored).catch(() => {});
      await statuses.until(waiting, "input_required");
      const listed = new Map((await listAllTasks(fx.client)).map((t) => [t.taskId, t]));
      for (const id of [working, completed, failed, errored, cancelled, waiting]) {
        expect(listed.get(id)).toEqual(await getTask(fx.client, id));
      }
      expect([...listed.values()].map((t) => t.status).sort()).toEqual([
        "cancelled",
        "completed",
        "failed",
        "failed",
        "input_required",
        "working",
      ]);
    });
  });
}
