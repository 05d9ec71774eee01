/**
 * A single node's dispatcher starts a claimed task's handler from the row its claim returned,
 * without reading the task again; a task cancelled while that claim was in flight is heard on the
 * bus and never started (T-CANCEL-3: cancelled before its handler could be stopped, it must not run).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { localEventBus } from "../../src/events/local-event-bus.js";
import { TaskEngine } from "../../src/runtime/task-engine.js";
import { sqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { TaskStore } from "../../src/store/task-store.js";

const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-local-dispatch-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const origin = { sessionId: null, progressToken: null, accepts: [] };
const caller = { owner: "alice" };

describe("LocalDispatcher", () => {
  it("never starts a task cancelled while the claim that returns it is in flight", async () => {
    const real = sqliteStore(join(dir, "cancel-during-claim.db"));
    let cancelDuringClaim: string | null = null;
    let engine: TaskEngine | null = null;
    // The real store, its claim followed by a cancel before the claim's answer reaches the dispatcher.
    const store = new Proxy(real, {
      get(target, property, receiver) {
        if (property === "claimRunnable") {
          return async (...args: Parameters<typeof real.claimRunnable>) => {
            const claimed = await target.claimRunnable(...args);
            const id = cancelDuringClaim;
            cancelDuringClaim = null;
            if (id !== null && claimed.some((task) => task.id === id)) await engine?.cancel(id, caller);
            return claimed;
          };
        }
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    }) as TaskStore;
    const started: string[] = [];
    engine = new TaskEngine({
      store,
      bus: localEventBus(),
      runner: async (task) => {
        started.push(task.id);
        return { value: { content: [] } };
      },
    });
    await engine.start();
    try {
      const task = await engine.create({ ...caller, method: "tools/call", name: "t", request: {}, origin, ttl: 60_000 });
      cancelDuringClaim = task.id;
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(cancelDuringClaim).toBeNull(); // the claim ran and the cancel came in its middle
      expect((await engine.get(task.id, caller))?.status).toBe("cancelled");
      expect(started).toEqual([]);

      // The next task, claimed with nothing in between, starts from its claimed row.
      const next = await engine.create({ ...caller, method: "tools/call", name: "t", request: {}, origin, ttl: 60_000 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(started).toEqual([next.id]);
      expect((await engine.get(next.id, caller))?.status).toBe("completed");
    } finally {
      await engine.close();
      await real.close();
    }
  });
});
