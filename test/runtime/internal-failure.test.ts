/** The one way the server fails a task it could not let finish (sweeper, recovery, lease reaper, shutdown). */
import { describe, expect, it } from "vitest";
import { RpcCode } from "../../src/core/errors.js";
import type { TaskEvent } from "../../src/events/task-event.js";
import { localEventBus } from "../../src/events/local-event-bus.js";
import { failInternally } from "../../src/runtime/internal-failure.js";
import { memoryStore } from "../../src/store/memory/memory-store.js";
import { captureLogger } from "../support/conformance.js";

async function fixture() {
  const store = memoryStore();
  const bus = localEventBus();
  const logger = captureLogger();
  const events: TaskEvent[] = [];
  bus.onAny((event) => events.push(event));
  const task = await store.create({
    id: "t-1",
    owner: "local|alice",
    method: "tools/call",
    name: "render",
    request: {},
    origin: { sessionId: null, progressToken: null, accepts: [], peer: "127.0.0.1" },
    createdAt: 1000,
    ttlMs: null,
    pollIntervalMs: null,
    retryable: false,
  });
  return { store, bus, logger, events, task, deps: { store, bus, logger, now: () => 2000 } };
}

describe("failInternally", () => {
  it("fails an active task with the message as statusMessage and a -32603 outcome (T-LIFE-4)", async () => {
    const { store, task, deps } = await fixture();
    const failed = await failInternally(deps, task, "restart", "The server stopped");
    expect(failed).toMatchObject({ status: "failed", statusMessage: "The server stopped", updatedAt: 2000 });
    expect((await store.get(task.id, { any: true }))?.outcome).toEqual({
      kind: "error",
      error: { code: RpcCode.InternalError, message: "The server stopped" },
    });
  });

  it("writes one audit line naming the task, its owner, method and peer (T-SEC-5)", async () => {
    const { logger, task, deps } = await fixture();
    await failInternally(deps, task, "lease_lost", "worker lost", { audit: { workerId: "w1" } });
    expect(logger.entries.filter((e) => e.obj["audit"])).toEqual([
      {
        level: "warn",
        obj: { audit: "lease_lost", taskId: "t-1", owner: "local|alice", method: "tools/call", peer: "127.0.0.1", workerId: "w1" },
        msg: "failed a task whose worker was lost",
      },
    ]);
  });

  it("publishes the status event, and a cancel event where a handler may still run", async () => {
    const expired = await fixture();
    await failInternally(expired.deps, expired.task, "expired", "ttl elapsed");
    expect(expired.events.map((e) => [e.type, e.type === "cancel" ? e.reason : e.type === "status" ? e.status : null])).toEqual([
      ["status", "failed"],
      ["cancel", "expired"],
    ]);
    const shutdown = await fixture();
    await failInternally(shutdown.deps, shutdown.task, "shutdown", "shutting down");
    expect(shutdown.events.map((e) => e.type)).toEqual(["status"]);
  });

  it("does nothing to a task that already ended: no write, no audit line, no event (T-LIFE-3)", async () => {
    const { store, logger, events, task, deps } = await fixture();
    await store.transition(task.id, ["working"], "completed", { outcome: { kind: "result", value: {} }, statusMessage: null, now: 1500 });
    events.length = 0;
    expect(await failInternally(deps, task, "expired", "too late")).toBeNull();
    expect((await store.get(task.id, { any: true }))?.status).toBe("completed");
    expect(logger.entries).toEqual([]);
    expect(events).toEqual([]);
  });

  it("uses the caller's compare-and-set when given one", async () => {
    const { task, deps, events } = await fixture();
    const writes: string[] = [];
    const failed = await failInternally(deps, task, "lease_lost", "worker lost", {
      write: async (statusMessage) => {
        writes.push(statusMessage);
        return null;
      },
    });
    expect(failed).toBeNull();
    expect(writes).toEqual(["worker lost"]);
    expect(events).toEqual([]);
  });
});
