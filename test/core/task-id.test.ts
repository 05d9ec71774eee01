/**
 * Task ids (T-ID-1, T-ID-2): unguessable from their 128 random bits, and in creation order by
 * their prefix so the stores' id-keyed b-trees grow at one edge.
 */
import { describe, expect, it } from "vitest";
import { newTaskId } from "../../src/core/task-id.js";

describe("newTaskId", () => {
  it("is 41 lowercase characters: nine base-36 digits of the millisecond, then 32 hex digits", () => {
    const id = newTaskId(Date.UTC(2026, 11, 2));
    expect(id).toMatch(/^[0-9a-z]{9}[0-9a-f]{32}$/);
    expect(parseInt(id.slice(0, 9), 36)).toBe(Date.UTC(2026, 11, 2));
  });

  it("T-ID-2: ids made in the same millisecond share only the prefix; the 128 bits after it differ, across refills of the random pool", () => {
    const ids = Array.from({ length: 2_000 }, () => newTaskId(1_000));
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids.map((id) => id.slice(9))).size).toBe(ids.length);
    // Every hex digit takes many values at every position: the suffix is random, not a counter.
    for (let position = 9; position < 41; position++) {
      expect(new Set(ids.map((id) => id[position])).size).toBeGreaterThan(12);
    }
  });

  it('sorts later creations after earlier ones, byte by byte (SQLite BINARY, PostgreSQL COLLATE "C")', () => {
    const times = [0, 1, 35, 36, 1_000, Date.UTC(2001, 0, 1), Date.UTC(2026, 11, 2), Date.UTC(2100, 0, 1)];
    const ids = times.map((t) => newTaskId(t));
    expect([...ids].sort()).toEqual(ids);
  });

  it("takes a clock that reads before 1970 or between milliseconds without breaking the format", () => {
    expect(newTaskId(-5)).toMatch(/^0{9}[0-9a-f]{32}$/);
    expect(newTaskId(1.7)).toMatch(/^0{8}1[0-9a-f]{32}$/);
  });
});
