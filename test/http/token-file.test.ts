/** The token file format: plain principals (as before) and admin grants. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadTokenFile } from "../../src/http/token-file.js";

const dir = mkdtempSync(join(tmpdir(), "mcp-tasks-tokens-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const fileWith = (content: unknown): string => {
  const path = join(dir, `tokens-${++files}.json`);
  writeFileSync(path, JSON.stringify(content));
  return path;
};

describe("loadTokenFile", () => {
  it("reads plain principals as non-admin grants, as before", () => {
    expect(loadTokenFile(fileWith({ "tok-a": "alice" }))).toEqual(new Map([["tok-a", { principal: "alice", admin: false }]]));
  });

  it("reads {principal, admin} entries", () => {
    const tokens = loadTokenFile(fileWith({ "tok-o": { principal: "ops", admin: true }, "tok-b": { principal: "bob" } }));
    expect(tokens.get("tok-o")).toEqual({ principal: "ops", admin: true });
    expect(tokens.get("tok-b")).toEqual({ principal: "bob", admin: false });
  });

  it.each([
    ["an empty principal", { "tok-a": "" }],
    ["a number", { "tok-a": 42 }],
    ["an object without a principal", { "tok-a": { admin: true } }],
    ["a non-boolean admin flag", { "tok-a": { principal: "ops", admin: "yes" } }],
    ["a misspelt key", { "tok-a": { principal: "ops", admn: true } }],
    ["an empty token", { "": "alice" }],
  ])("refuses %s with a message naming the file and the format", (_what, content) => {
    const path = fileWith(content);
    expect(() => loadTokenFile(path)).toThrow(
      new RegExp(`${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} maps every token to a non-empty principal string`),
    );
  });
});
