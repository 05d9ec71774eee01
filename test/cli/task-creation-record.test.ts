import { describe, expect, it } from "vitest";
import type { JournalEntry } from "../../src/client/task-journal.js";
import { creationRecord, toolsOf } from "../../src/cli/task-creation-record.js";

const A = "http://front-a:8080/mcp";
const B = "http://front-b:8080/mcp";
const C = "http://elsewhere:9000/mcp";

function created(taskId: string, target: string, protocol: string, name = "sleep"): JournalEntry {
  return { at: "2026-12-03T10:00:00.000Z", op: "created", taskId, target, protocol, name };
}

describe("the journal's record of a task's creation", () => {
  it("is the one made through the target asked about, when there is one", () => {
    const entries = [created("t1", A, "2025-11-25"), created("t1", B, "2026-07-28")];
    expect(creationRecord(entries, "t1", B)?.protocol).toBe("2026-07-28");
    expect(creationRecord(entries, "t1", A)?.protocol).toBe("2025-11-25");
  });

  it("is the one made through another target (another front of the cluster) when none was made through this one", () => {
    const entries = [created("t1", A, "2026-07-28")];
    expect(creationRecord(entries, "t1", B)).toMatchObject({ target: A, protocol: "2026-07-28" });
  });

  it("is none when records of the id from other targets disagree on the era: ids of unrelated servers may collide", () => {
    const entries = [created("7", A, "2025-11-25"), created("7", C, "2026-07-28")];
    expect(creationRecord(entries, "7", B)).toBeUndefined();
  });

  it("reads only creations, never a later operation's record", () => {
    const entries: JournalEntry[] = [
      { at: "2026-12-03T10:00:00.000Z", op: "status", taskId: "t1", target: A, protocol: "2025-11-25", status: "working" },
    ];
    expect(creationRecord(entries, "t1", A)).toBeUndefined();
  });

  it("names the tool of each listed task that a run of this journal created, through any front", () => {
    const entries = [created("t1", A, "2025-11-25", "sleep"), created("t2", B, "2025-11-25", "echo")];
    expect(toolsOf(entries, ["t1", "t2", "t3"], B)).toEqual(
      new Map([
        ["t1", "sleep"],
        ["t2", "echo"],
      ]),
    );
  });
});
