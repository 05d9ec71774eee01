import { describe, expect, it } from "vitest";
import { FetchedMarks } from "../../src/runtime/fetched-marks.js";

describe("FetchedMarks: the results this process already recorded as fetched", () => {
  it("knows an id once it was added, and no other", () => {
    const marks = new FetchedMarks();
    marks.add("a");
    expect(marks.has("a")).toBe(true);
    expect(marks.has("b")).toBe(false);
  });

  it("forgets the oldest id first once past its capacity", () => {
    const marks = new FetchedMarks(2);
    marks.add("a");
    marks.add("b");
    marks.add("a"); // already known: does not count as newer
    marks.add("c");
    expect([marks.has("a"), marks.has("b"), marks.has("c")]).toEqual([false, true, true]);
  });
});
