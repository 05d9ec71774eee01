/**
 * The lane classifier (test/lanes.ts) on small test trees written to a temporary directory: a file
 * is `integration` for what its code does (it loads a module that starts processes or connects to
 * an outside service, directly or through a helper under test/), never for a string or a comment.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { lanes } from "./lanes.js";

const roots: string[] = [];

afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** The lane of `test/x.test.ts` in a tree of these files (paths under test/). */
function laneOf(files: Record<string, string>): "unit" | "integration" {
  const root = mkdtempSync(join(tmpdir(), "mcp-tasks-lanes-"));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, "test", path)), { recursive: true });
    writeFileSync(join(root, "test", path), text);
  }
  const { unit, integration } = lanes(root);
  if (unit.includes("test/x.test.ts")) return "unit";
  if (integration.includes("test/x.test.ts")) return "integration";
  throw new Error("test/x.test.ts is in neither lane");
}

describe("a file is in the unit lane when its code needs nothing outside the process", () => {
  it.each([
    ["a fake postgres:// URL in a string", 'it("redacts", () => { throw new Error("secret: postgres://admin:hunter2@db"); });'],
    ["a URL and service names in a template literal", "const command = `tmux new -d nginx redis://x ${'postgres://y'}`;"],
    [
      "child_process, tmux and pg named in comments",
      '// spawns nothing: child_process, tmux and pg are only named here\n/* import pg from "pg"; */\nexport {};',
    ],
    ["an import of pg written inside a regular expression", 'expect(text).toMatch(/import pg from "pg"/);'],
    ["a type-only import of pg", 'import type { Pool } from "pg";\nlet pool: Pool | undefined;'],
    [
      "type-only names imported from the SDK's stdio transport",
      'import { type StdioServerParameters } from "@modelcontextprotocol/sdk/client/stdio.js";',
    ],
    ["process.execPath in a string", 'const usage = "run it with process.execPath";'],
    ["a property that happens to be called execPath", "const execPath = options.execPath;"],
    [
      "the SDK's stdio server transport (in-process, on this process's own streams)",
      'import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";',
    ],
  ])("%s", (_, text) => {
    expect(laneOf({ "x.test.ts": text })).toBe("unit");
  });

  it("a helper it imports is unit too when the helper spawns nothing", () => {
    expect(
      laneOf({
        "x.test.ts": 'import { port } from "./support/free-port.js";',
        "support/free-port.ts": 'import { createServer } from "node:net";\nexport const port = "postgres://x";',
      }),
    ).toBe("unit");
  });
});

describe("a file is in the integration lane when it starts a process or opens a connection", () => {
  it.each([
    ["it imports the pg driver", 'import pg from "pg";'],
    ["it imports node:child_process", 'import { spawn } from "node:child_process";'],
    ["it imports child_process without the node: prefix", 'const { execFile } = require("child_process");'],
    ["it loads child_process with a dynamic import", 'const { spawn } = await import("node:child_process");'],
    ["it imports playwright", 'import { chromium } from "playwright-core";'],
    ["it imports the SDK's stdio client transport", 'import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";'],
    [
      "it constructs a StdioClientTransport from another entry",
      'import { StdioClientTransport } from "@modelcontextprotocol/client";\nnew StdioClientTransport({ command: "x" });',
    ],
    ["it hands process.execPath to something that spawns it", "const upstream = { command: process.execPath, args: [script] };"],
    ["it imports a Redis client", 'import Redis from "ioredis";'],
    ["it imports pg beside type-only names", 'import pg, { type Pool } from "pg";'],
  ])("%s", (_, text) => {
    expect(laneOf({ "x.test.ts": text })).toBe("integration");
  });

  it("it imports a helper that spawns", () => {
    expect(
      laneOf({
        "x.test.ts": 'import { runCli } from "./support/cli.js";',
        "support/cli.ts": 'import { spawn } from "node:child_process";\nexport const runCli = () => spawn("x");',
      }),
    ).toBe("integration");
  });

  it("it imports a helper that imports the PostgreSQL fixture (followed through every relative import)", () => {
    expect(
      laneOf({
        "x.test.ts": 'import { cluster } from "./support/cluster.js";',
        "support/cluster.ts": 'export { TEST_PG_URL as url } from "./postgres.js";\nexport const cluster = 1;',
        "support/postgres.ts": 'import pg from "pg";\nexport const TEST_PG_URL = "postgres://postgres@127.0.0.1/test";',
      }),
    ).toBe("integration");
  });

  it("an import cycle between helpers still reaches the one that spawns", () => {
    expect(
      laneOf({
        "x.test.ts": 'import "./a.js";',
        "a.ts": 'import "./b.js";',
        "b.ts": 'import "./a.js";\nimport "./c.js";',
        "c.ts": 'import { fork } from "node:child_process";',
      }),
    ).toBe("integration");
  });
});

describe("the lanes of this repository", () => {
  const { unit, integration } = lanes(join(import.meta.dirname, ".."));

  it("runs the in-process 2025-11-25 conformance suite, the store contract and the engine in the unit lane", () => {
    expect(unit).toEqual(
      expect.arrayContaining(["test/conformance/rev2025-11-25/in-memory.test.ts", "test/store/sqlite-store.test.ts", "test/lanes.test.ts"]),
    );
  });

  it("runs the PostgreSQL store, the CLI's processes and the browser in the integration lane", () => {
    expect(integration).toEqual(
      expect.arrayContaining(["test/store/postgres-store.test.ts", "test/e2e/cli.test.ts", "test/web/web-view.browser.test.ts"]),
    );
  });
});
