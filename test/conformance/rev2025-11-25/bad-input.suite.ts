import { beforeEach, describe, expect, it } from "vitest";
import {
  AnyResultSchema,
  callTool,
  callToolAsTask,
  expectRpcError,
  getTask,
  listAllTasks,
  listTasks,
  taskResult,
} from "../../support/conformance.js";
import type { ConformanceFixture } from "../../support/conformance-fixtures.js";
import { on, useFixture, type ConformancePath } from "./paths.js";

export function badInputSuite(path: ConformancePath): void {
  const start = useFixture(path);
  const inMemoryOnly = on(path, ["in-memory"]);

  let fx: ConformanceFixture;
  beforeEach(async () => {
    fx = await start({ maxArgumentBytes: 1024 });
  });

  const UNKNOWN_ID = "6f1c2a9e-3b7d-4c1e-9a2b-5d8e7f6a4b3c";

  function raw(method: string, params?: Record<string, unknown>) {
    return fx.client.request(params === undefined ? { method } : { method, params }, AnyResultSchema);
  }

  describe("bad input to tasks/get, tasks/result, tasks/cancel (T-ERR-1)", () => {
    for (const method of ["tasks/get", "tasks/result", "tasks/cancel"]) {
      it(`T-ERR-1: ${method} without params is rejected with -32602 naming taskId`, async () => {
        await expectRpcError(raw(method), -32602, "Invalid params: taskId must be a non-empty string");
      });

      it(`T-ERR-1: ${method} without a taskId is rejected with -32602`, async () => {
        await expectRpcError(raw(method, {}), -32602, "Invalid params: taskId must be a non-empty string");
      });

      it(`T-ERR-1: ${method} with a non-string taskId is rejected with -32602`, async () => {
        for (const taskId of [42, null, true, { id: UNKNOWN_ID }, [UNKNOWN_ID]]) {
          await expectRpcError(raw(method, { taskId }), -32602, "Invalid params: taskId must be a non-empty string");
        }
      });

      it(`T-ERR-1: ${method} with an empty taskId is rejected with -32602`, async () => {
        await expectRpcError(raw(method, { taskId: "" }), -32602, "Invalid params: taskId must be a non-empty string");
      });

      it(`T-ERR-1: ${method} with an oversized taskId is rejected with -32602`, async () => {
        await expectRpcError(raw(method, { taskId: "x".repeat(100_000) }), -32602, "Invalid params: taskId is too long");
      });

      it(`T-ERR-1/T-ERR-6: ${method} with an unknown taskId is rejected with -32602 "Task not found"`, async () => {
        await expectRpcError(raw(method, { taskId: UNKNOWN_ID }), -32602, /: Task not found$/);
      });

      it(`T-ERR-1: ${method} with a malformed taskId is "not found", never an internal error`, async () => {
        for (const taskId of ["../../etc/passwd", "' OR 1=1 --", "%00", "\u0000", "🙂"]) {
          await expectRpcError(raw(method, { taskId }), -32602, /Task not found/);
        }
      });
    }

    it("T-ERR-6: lookup errors name the operation that failed", async () => {
      await expectRpcError(raw("tasks/get", { taskId: UNKNOWN_ID }), -32602, "Failed to retrieve task: Task not found");
      await expectRpcError(raw("tasks/result", { taskId: UNKNOWN_ID }), -32602, "Failed to retrieve task result: Task not found");
      await expectRpcError(raw("tasks/cancel", { taskId: UNKNOWN_ID }), -32602, "Failed to cancel task: Task not found");
    });
  });

  describe("bad cursors in tasks/list (T-ERR-2)", () => {
    it("T-ERR-2: a cursor that is not a string is rejected with -32602", async () => {
      for (const cursor of [7, true, { after: 1 }, ["a"]]) {
        await expectRpcError(listTasks(fx.client, cursor), -32602, "Invalid cursor");
      }
    });

    it("T-ERR-2: an empty cursor is rejected with -32602", async () => {
      await expectRpcError(listTasks(fx.client, ""), -32602, "Invalid cursor");
    });

    it("T-ERR-2: a cursor without a signature is rejected with -32602", async () => {
      const body = Buffer.from(JSON.stringify([0, ""])).toString("base64url");
      await expectRpcError(listTasks(fx.client, body), -32602, "Invalid cursor");
      await expectRpcError(listTasks(fx.client, `${body}.`), -32602, "Invalid cursor");
    });

    it("T-ERR-2: an oversized cursor is rejected with -32602", async () => {
      await expectRpcError(listTasks(fx.client, `${"a".repeat(50_000)}.${"b".repeat(43)}`), -32602, "Invalid cursor");
    });
  });

  describe("bad task augmentation (T-NEW-1, T-TYPE-2)", () => {
    it("T-TYPE-2: a negative ttl is rejected with -32602 and creates no task", async () => {
      await expectRpcError(callToolAsTask(fx.client, "sleep", { ms: 1 }, { ttl: -1 }), -32602, "Invalid task ttl: must not be negative");
      expect(await listAllTasks(fx.client)).toEqual([]);
    });

    it("T-TYPE-2: a non-numeric ttl is rejected with -32602 and creates no task", async () => {
      for (const ttl of ["60000", true, { ms: 1 }, [1]]) {
        await expectRpcError(
          callToolAsTask(fx.client, "sleep", { ms: 1 }, { ttl }),
          -32602,
          "Invalid task ttl: must be a finite number of milliseconds",
        );
      }
      expect(await listAllTasks(fx.client)).toEqual([]);
    });

    // In memory only: JSON has no NaN or Infinity; serialized for HTTP they become null, which asks for the default ttl.
    inMemoryOnly("T-TYPE-2: a non-finite ttl is rejected with -32602", async () => {
      for (const ttl of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
        await expectRpcError(callToolAsTask(fx.client, "sleep", { ms: 1 }, { ttl }), -32602, /Invalid task ttl/);
      }
    });

    it("T-TTL-3: a huge ttl is capped to the maximum, not an error", async () => {
      for (const ttl of [1e300, Number.MAX_VALUE, Number.MAX_SAFE_INTEGER + 2]) {
        const { task } = await callToolAsTask(fx.client, "sleep", { ms: 0 }, { ttl });
        expect(task.ttl).toBe(24 * 3_600_000);
      }
    });

    it("T-NEW-1: params.task that is not an object is rejected with -32602 and creates no task", async () => {
      for (const task of ["yes", 5, true, [], null]) {
        await expectRpcError(
          fx.client.request({ method: "tools/call", params: { name: "sleep", arguments: { ms: 1 }, task } }, AnyResultSchema),
          -32602,
          "Invalid params: task must be an object",
        );
      }
      expect(await listAllTasks(fx.client)).toEqual([]);
    });
  });

  describe("bad tools/call input", () => {
    it("a tools/call without a tool name is rejected with -32602", async () => {
      await expectRpcError(raw("tools/call"), -32602, "Invalid params: name must be a non-empty string");
      await expectRpcError(raw("tools/call", { name: 7, arguments: {} }), -32602, "Invalid params: name must be a non-empty string");
    });

    it("an unknown tool is rejected with -32602", async () => {
      await expectRpcError(callTool(fx.client, "nope", {}), -32602, "Unknown tool: nope");
    });

    it("an unknown tool called as a task is rejected with -32602 and creates no task", async () => {
      await expectRpcError(callToolAsTask(fx.client, "nope", {}), -32602, "Unknown tool: nope");
      expect(await listAllTasks(fx.client)).toEqual([]);
    });

    it("arguments that are not an object are rejected with -32602", async () => {
      for (const args of [[1, 2], "ms=1", 3]) {
        await expectRpcError(raw("tools/call", { name: "sleep", arguments: args }), -32602, "Invalid params: arguments must be an object");
      }
    });

    it("arguments that fail the tool's schema are rejected with -32602 naming the field", async () => {
      await expectRpcError(callTool(fx.client, "sleep", { ms: "soon" }), -32602, /^Invalid arguments for tool sleep: ms: /);
      await expectRpcError(callTool(fx.client, "sleep", {}), -32602, /^Invalid arguments for tool sleep: ms: /);
      await expectRpcError(callTool(fx.client, "throw", { code: -1, message: "x" }), -32602, /^Invalid arguments for tool throw: code: /);
    });

    it("a task-augmented call whose arguments fail the schema is rejected with -32602 and creates no task", async () => {
      await expectRpcError(callToolAsTask(fx.client, "sleep", { ms: -5 }), -32602, /^Invalid arguments for tool sleep: ms: /);
      expect(await listAllTasks(fx.client)).toEqual([]);
    });

    it("oversize arguments are rejected with -32602 stating the limit", async () => {
      await expectRpcError(callTool(fx.client, "echo", { text: "x".repeat(2_000) }), -32602, /more than the limit of 1024/);
    });

    it("oversize arguments of a task-augmented call are rejected with -32602 and create no task", async () => {
      await expectRpcError(callToolAsTask(fx.client, "sleep", { ms: 1, pad: "x".repeat(2_000) }), -32602, /more than the limit of 1024/);
      expect(await listAllTasks(fx.client)).toEqual([]);
    });

    it("by default arguments above 1 MiB are rejected with -32602", async () => {
      const big = await start();
      try {
        await expectRpcError(callTool(big.client, "echo", { text: "x".repeat(1024 * 1024 + 1) }), -32602, /more than the limit of 1048576/);
        expect((await callTool(big.client, "echo", { text: "x".repeat(1000 * 1024) })).content).toHaveLength(1);
      } finally {
        await big.close();
      }
    });
  });

  describe("unknown methods", () => {
    it("an unknown tasks/* method is rejected with -32601", async () => {
      await expectRpcError(raw("tasks/delete", { taskId: UNKNOWN_ID }), -32601);
      await expectRpcError(raw("tasks/frobnicate", {}), -32601);
    });

    it("an unknown method is rejected with -32601", async () => {
      await expectRpcError(raw("no/such/method", {}), -32601);
    });
  });

  describe("robustness", () => {
    it("T-ERR-1: a bad request leaves existing tasks and the server intact", async () => {
      const { task } = await callToolAsTask(fx.client, "sleep", { ms: 0 });
      await expectRpcError(raw("tasks/get", { taskId: task.taskId.toUpperCase() }), -32602);
      await expectRpcError(raw("tasks/cancel", { taskId: `${task.taskId} ` }), -32602);
      await expectRpcError(raw("tasks/result", { taskId: task.taskId.slice(0, -1) }), -32602);
      await expectRpcError(callToolAsTask(fx.client, "sleep", { ms: 0 }, { ttl: -1 }), -32602);
      await expectRpcError(listTasks(fx.client, "garbage"), -32602);
      expect((await taskResult(fx.client, task.taskId)).content).toEqual([{ type: "text", text: "slept 0 ms" }]);
      expect((await getTask(fx.client, task.taskId)).status).toBe("completed");
      expect(await listAllTasks(fx.client)).toHaveLength(1);
    });
  });
}
