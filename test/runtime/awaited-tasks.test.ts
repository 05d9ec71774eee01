import { describe, expect, it } from "vitest";
import { AwaitedTasks } from "../../src/runtime/awaited-tasks.js";

describe("AwaitedTasks", () => {
  it("keeps a task awaited until the last of its waiters leaves", () => {
    const awaited = new AwaitedTasks();
    awaited.enter("a");
    awaited.enter("a");
    awaited.enter("b");
    awaited.leave("a");
    expect([awaited.has("a"), awaited.has("b")]).toEqual([true, true]);
    awaited.leave("a");
    awaited.leave("b");
    expect([awaited.has("a"), awaited.has("b")]).toEqual([false, false]);
  });
});
