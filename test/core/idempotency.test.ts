/**
 * SEP-3182's equivalence: two calls are the same when their tool and their arguments are equal as
 * parsed JSON — serialization details (key order, whitespace, `1` vs `1.0`, escapes) never matter.
 */
import { describe, expect, it } from "vitest";
import { callFingerprint, canonicalJson, checkIdempotencyKey, derivedKey, requestedKey } from "../../src/core/idempotency.js";

const same = (a: string, b: string): boolean => callFingerprint("tool", JSON.parse(a)) === callFingerprint("tool", JSON.parse(b));

describe("call equivalence (SEP-3182: arguments equal as parsed JSON)", () => {
  it.each([
    ["key order", `{"a":1,"b":{"x":[1,2],"y":null}}`, `{"b":{"y":null,"x":[1,2]},"a":1}`],
    ["whitespace", `{"a": [1, 2]}`, `{ "a" :[1,2] }`],
    ["1 and 1.0", `{"n":1}`, `{"n":1.0}`],
    ["an exponent", `{"n":100}`, `{"n":1e2}`],
    ["-0 and 0", `{"n":-0}`, `{"n":0}`],
    ["escaped and literal characters", `{"s":"caf\\u00e9 \\"q\\""}`, `{"s":"café \\"q\\""}`],
    ["an escaped key", `{"\\u0061":true}`, `{"a":true}`],
  ])("%s do not matter", (_what, a, b) => {
    expect(same(a, b)).toBe(true);
  });

  it.each([
    ["another value", `{"n":1}`, `{"n":2}`],
    ["a number and its string", `{"n":1}`, `{"n":"1"}`],
    ["array order", `{"a":[1,2]}`, `{"a":[2,1]}`],
    ["a missing member", `{"a":1,"b":null}`, `{"a":1}`],
    ["Unicode forms parsing does not unify (NFC and NFD)", `{"s":"\\u00e9"}`, `{"s":"e\\u0301"}`],
  ])("%s does", (_what, a, b) => {
    expect(same(a, b)).toBe(false);
  });

  it("another tool with the same arguments is another call", () => {
    expect(callFingerprint("a", { n: 1 })).not.toBe(callFingerprint("b", { n: 1 }));
  });

  it("canonical JSON sorts members by code point at every depth", () => {
    expect(canonicalJson({ b: [{ d: 1, c: 2 }], a: "x" })).toBe(`{"a":"x","b":[{"c":2,"d":1}]}`);
  });
});

describe("idempotency keys", () => {
  it.each([
    ["a number", 7],
    ["null", null],
    ["an object", { k: 1 }],
    ["an empty string", ""],
    ["256 characters", "k".repeat(256)],
    ["256 characters outside the Basic Multilingual Plane", "😀".repeat(256)],
  ])("%s is refused with -32602", (_what, key) => {
    expect(() => checkIdempotencyKey(key)).toThrow(
      expect.objectContaining({ code: -32602, message: expect.stringMatching(/idempotencyKey/) }),
    );
  });

  it("1 to 255 characters are taken as they are", () => {
    expect(checkIdempotencyKey("k")).toBe("k");
    expect(checkIdempotencyKey("k".repeat(255))).toBe("k".repeat(255));
  });

  it("counts characters, not UTF-16 units: 255 emoji are 255 characters", () => {
    expect(checkIdempotencyKey("😀".repeat(255))).toBe("😀".repeat(255));
  });

  it("a requestor's key and a key the server derives can never be the same", () => {
    const derived = derivedKey("tool", { n: 1 });
    expect(requestedKey(derived.key, "tool", { n: 1 }).key).not.toBe(derived.key);
  });
});
