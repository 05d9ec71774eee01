/**
 * Paused tools (tool-pause-store.ts): a pause is stored, listed and lifted, and a claim — the
 * single node's `claimRunnable` or a cluster's lease `claim` — leaves every queued task of a paused
 * tool where it is, a parked task that wakes included, while other tools' tasks go on. Part of
 * {@link storeContract}.
 */
import { describe, expect, it } from "vitest";
import type { NewTask, TaskRecord } from "../core/task.js";
import { isLeaseStore } from "../store/lease-store.js";
import { isRunQueueStore, NO_CAPS } from "../store/run-queue.js";
import type { TaskStore } from "../store/task-store.js";
import { isToolPauseStore, type ToolPauseStore } from "../store/tool-pause-store.js";
import { isWaitStore } from "../store/wait-store.js";

const T0 = 1_700_000_000_000;

/** `current`: the store under test; `newTask`: a valid new task with these fields. */
export function toolPauseContract(current: () => TaskStore, newTask: (overrides: Partial<NewTask>) => NewTask): void {
  describe("paused tools (their queued tasks wait; the pause is stored)", () => {
    const pauses = (): TaskStore & ToolPauseStore => {
      const store = current();
      if (!isToolPauseStore(store)) throw new Error("this store does not implement ToolPauseStore");
      return store;
    };

    async function claim(limit: number): Promise<string[]> {
      const store = current();
      let claimed: TaskRecord[];
      if (isRunQueueStore(store)) claimed = await store.claimRunnable(limit, T0 + 100, NO_CAPS);
      else if (isLeaseStore(store)) claimed = await store.claim("worker-1", limit, 30_000, T0 + 100, undefined, NO_CAPS);
      else throw new Error("this store keeps no queue");
      return claimed.sort((a, b) => a.createdAt - b.createdAt).map((task) => task.id);
    }

    let clock = 0;
    const queue = async (name: string, owner: string | null = "A"): Promise<string> =>
      (await current().create(newTask({ owner, name, createdAt: T0 + clock++ }))).id;

    it("a pause is listed with who paused it and when; pausing twice or resuming twice changes nothing", async () => {
      const store = pauses();
      expect(await store.pausedTools()).toEqual([]);
      expect(await store.pauseTool({ name: "render", pausedAt: T0, pausedBy: "admin" })).toBe(true);
      expect(await store.pauseTool({ name: "render", pausedAt: T0 + 5, pausedBy: "someone else" })).toBe(false);
      expect(await store.pauseTool({ name: "export", pausedAt: T0 + 1, pausedBy: "ops" })).toBe(true);
      expect(await store.pausedTools()).toEqual([
        { name: "export", pausedAt: T0 + 1, pausedBy: "ops" },
        { name: "render", pausedAt: T0, pausedBy: "admin" },
      ]);
      expect(await store.resumeTool("render")).toBe(true);
      expect(await store.resumeTool("render")).toBe(false);
      expect(await store.pausedTools()).toEqual([{ name: "export", pausedAt: T0 + 1, pausedBy: "ops" }]);
    });

    it("a claim skips every queued task of a paused tool and takes the others' in their fair order", async () => {
      await pauses().pauseTool({ name: "render", pausedAt: T0, pausedBy: "admin" });
      const r1 = await queue("render");
      const e1 = await queue("export");
      const r2 = await queue("render", "B");
      const e2 = await queue("export", "B");
      expect(await claim(10)).toEqual([e1, e2]);
      expect(await claim(10)).toEqual([]);
      expect(await pauses().resumeTool("render")).toBe(true);
      expect(await claim(10)).toEqual([r1, r2]);
    });

    it("a claim with room for one skips a paused tool's task at the head of the queue", async () => {
      await pauses().pauseTool({ name: "render", pausedAt: T0, pausedBy: "admin" });
      await queue("render");
      await queue("render");
      const e1 = await queue("export");
      expect(await claim(1)).toEqual([e1]);
    });

    it("a claim with less room than the queue holds (the ranked claim) still skips a paused tool's tasks", async () => {
      await pauses().pauseTool({ name: "render", pausedAt: T0, pausedBy: "admin" });
      await queue("render");
      await queue("render");
      const e1 = await queue("export");
      const e2 = await queue("export");
      expect(await claim(1)).toEqual([e1]);
      expect(await claim(1)).toEqual([e2]);
      expect(await claim(1)).toEqual([]);
    });

    it("a parked task of a paused tool that wakes is queued again, and stays queued until the tool is resumed", async () => {
      const store = current();
      if (!isWaitStore(store)) return;
      const id = await queue("render");
      expect(await claim(1)).toEqual([id]);
      await pauses().pauseTool({ name: "render", pausedAt: T0, pausedBy: "admin" });
      // Nothing left to wait for: the park queues it again at once (WaitStore.setWaitMode).
      expect(await store.setWaitMode(id, "parked")).toBe(true);
      expect(await claim(10)).toEqual([]);
      await pauses().resumeTool("render");
      expect(await claim(10)).toEqual([id]);
    });
  });
}
