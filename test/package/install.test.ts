/**
 * The package as a user gets it: `npm pack`, installed into a
 * fresh ESM project from the tarball together with zod, the SDK and TypeScript from the registry —
 * first the newest of each, then the lowest versions our peer ranges allow. It type-checks and runs
 * the README's tool example, loads `mcp-tasks/client` without a native addon, pg, prom-client or
 * jose, serves a TypeScript `--tools` module through the project's tsx, works with a Client from a
 * second copy of the SDK, and starts its CLI quickly. And the library install as the README gives it
 * (`npm install mcp-tasks`, its required peers coming with it) into a project of its own: its time
 * and size, printed and held to the goal, none of the CLI's optional packages in it, and
 * `mcp-tasks serve` running from it as installed.
 */
import { execFile, spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../support/cli-process.js";

const exec = promisify(execFile);
const INSTALL_TIMEOUT_MS = 10 * 60_000;
const STEP_TIMEOUT_MS = 2 * 60_000;

const manifest = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as {
  peerDependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
/** The lowest version a caret range admits ("^1.24.0" → "1.24.0"). */
const lowest = (name: string): string => {
  const range = manifest.peerDependencies[name];
  const match = /^\^(\d+\.\d+\.\d+)$/.exec(range ?? "");
  if (!match?.[1]) throw new Error(`peer range of ${name} is not a caret range: ${range}`);
  return match[1];
};

/** Our environment without npm's per-run variables (a nested npm must not inherit `npm test`'s). */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^npm_/i.test(key)) env[key] = value;
  delete env["PORT"];
  delete env["NODE_OPTIONS"];
  return { ...env, ...extra };
}

async function run(command: string, args: string[], cwd: string, timeout = STEP_TIMEOUT_MS): Promise<{ stdout: string; stderr: string }> {
  try {
    return await exec(command, args, { cwd, env: cleanEnv(), timeout, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(" ")} failed in ${cwd}: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`, { cause: error });
  }
}

/** Runs a command to its end, whatever its exit code. */
function runToEnd(
  command: string,
  args: string[],
  cwd: string,
): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { cwd, env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), STEP_TIMEOUT_MS);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: performance.now() - started });
    });
  });
}

/** The README's five-minute example: the first ts block of its "Five-minute start". */
function readmeToolExample(): string {
  const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Five-minute start"));
  const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error("README.md has no ts block under ## Five-minute start");
  return block;
}

// The README example ends by serving on port 3000; here it serves on a free port and hands the
// handle to the driver below, and nothing else of it changes.
const SERVE_LINE = "const http = await serveHttp(app, { port: 3000 });";
const EXPORTED_SERVE = "export const http = await serveHttp(app, { port: 0 });";

/** Calls the example's tool as a task through TaskClient, answering its elicitation, and prints the result. */
const DRIVER = `import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { TaskClient } from "mcp-tasks/client";
import { http as served } from "./example.js";

const client = new Client({ name: "driver", version: "1.0.0" });
const tasks = new TaskClient(client, { elicit: async () => ({ action: "accept", content: { fourK: true } }) });
await client.connect(new StreamableHTTPClientTransport(new URL(served.url)));
const call = await tasks.callTool("render", { scene: "intro" }, { task: true });
if (call.kind !== "task") throw new Error("expected a task, got a plain result");
const result = await call.task.result();
process.stdout.write(JSON.stringify(result));
await tasks.close();
await client.close();
await served.close();
process.exit(0);
`;

const TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    skipLibCheck: true,
    types: ["node"],
    outDir: "out",
  },
  include: ["*.ts"],
};

/** A TypeScript tools module for `mcp-tasks serve --tools` (type annotations: Node 20 cannot run it bare). */
const TOOLS_MODULE = `import { z } from "zod";
import type { TaskServer } from "mcp-tasks";

export default function register(app: TaskServer): void {
  app.tool("shout", { input: z.object({ text: z.string() }) }, async ({ text }: { text: string }) => ({
    content: [{ type: "text", text: text.toUpperCase() }],
  }));
}
`;

/**
 * Records what an import loads: every module URL resolved (an ESM resolve hook, appending to
 * $LOADED_LOG), every file require() resolves (Module._resolveFilename: the ESM hook does not see
 * require, and pg and pino-pretty are required lazily, on first use), and every native addon
 * opened (process.dlopen, which Node uses for each .node file).
 */
const LOAD_HOOKS = `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(process.env.LOADED_LOG, "module " + resolved.url + "\\n");
  return resolved;
}
`;
const LOAD_RECORDER = `import { appendFileSync } from "node:fs";
import Module, { register } from "node:module";
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (...args) {
  const filename = resolveFilename.apply(this, args);
  appendFileSync(process.env.LOADED_LOG, "module file://" + filename + "\\n");
  return filename;
};
const dlopen = process.dlopen;
process.dlopen = function (module, filename, ...rest) {
  appendFileSync(process.env.LOADED_LOG, "addon " + filename + "\\n");
  return dlopen.call(this, module, filename, ...rest);
};
register("./load-hooks.mjs", import.meta.url);
`;

/** Loads the given entries (and optionally opens a SQLite store), under the recorder. */
async function loadedBy(project: string, script: string): Promise<string[]> {
  const log = join(project, `loaded-${Math.random().toString(36).slice(2)}.log`);
  writeFileSync(log, "");
  writeFileSync(join(project, "load-check.mjs"), script);
  await exec(process.execPath, ["--import", "./load-recorder.mjs", "load-check.mjs"], {
    cwd: project,
    env: cleanEnv({ LOADED_LOG: log }),
    timeout: STEP_TIMEOUT_MS,
  });
  return readFileSync(log, "utf8").split("\n").filter(Boolean);
}

// The OpenTelemetry SDK and exporters are the CLI's, loaded only when OTEL_* asks; the library speaks the API.
const FORBIDDEN =
  /\/node_modules\/(better-sqlite3|bindings|pg|pg-pool|pg-protocol|prom-client|jose|@opentelemetry\/(sdk-[^/]+|exporter-[^/]+))\//;

let work: string;
let project: string;
let tarball: string;
/** Whether this Node strips TypeScript types itself (22.18 and later, 24): then `--tools x.ts` needs no tsx. */
const NATIVE_TYPE_STRIPPING = Boolean((process.features as { typescript?: unknown }).typescript);

/** What `npm install` of the tarball printed (npm writes its warnings to stderr). */
let installOutput: string;

beforeAll(
  async () => {
    work = mkdtempSync(join(tmpdir(), "mcp-tasks-package-"));
    project = join(work, "app");
    mkdirSync(project);
    // prepack builds dist/ first.
    const packed = await run("npm", ["pack", "--silent", "--pack-destination", work], REPO_ROOT, 5 * 60_000);
    tarball = join(work, packed.stdout.trim().split("\n").pop() ?? "");
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ name: "app", private: true, type: "module", allowScripts: { "better-sqlite3": true, esbuild: true } }, null, 2),
    );
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify(TSCONFIG, null, 2));
    writeFileSync(join(project, "load-hooks.mjs"), LOAD_HOOKS);
    writeFileSync(join(project, "load-recorder.mjs"), LOAD_RECORDER);
    const example = readmeToolExample();
    if (!example.includes(SERVE_LINE)) throw new Error(`the README's tool example no longer serves with ${SERVE_LINE}: update this test`);
    writeFileSync(join(project, "example.ts"), example.replace(SERVE_LINE, EXPORTED_SERVE));
    writeFileSync(join(project, "driver.ts"), DRIVER);
    writeFileSync(join(project, "tools.ts"), TOOLS_MODULE);
    const installed = await run(
      "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        tarball,
        "zod@latest",
        "@modelcontextprotocol/sdk@latest",
        "typescript@latest",
        "tsx@latest",
        "@types/node@20",
        // A second, different copy of the SDK, as an application may have besides the one npm gives mcp-tasks.
        `sdk-copy@npm:@modelcontextprotocol/sdk@${lowest("@modelcontextprotocol/sdk")}`,
        // What an application that keeps tasks in SQLite on Node 20 adds (Node 22.16 and later have node:sqlite).
        `better-sqlite3@${manifest.devDependencies["better-sqlite3"]}`,
      ],
      project,
      INSTALL_TIMEOUT_MS,
    );
    installOutput = installed.stdout + installed.stderr;
  },
  INSTALL_TIMEOUT_MS + 5 * 60_000,
);

// Removing the project (two installs of node_modules) can take longer than the default 20 s on a loaded machine.
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
}, 120_000);

/** Type-checks the example and its driver with the project's TypeScript, runs them, and returns what the tool answered. */
async function typecheckAndRunExample(): Promise<unknown> {
  rmSync(join(project, "out"), { recursive: true, force: true });
  await run(process.execPath, [join(project, "node_modules/typescript/bin/tsc"), "-p", "."], project);
  const { stdout } = await run(process.execPath, ["out/driver.js"], project);
  // The example says where it listens, as a newcomer's server should; the driver's answer follows.
  const lines = stdout.trim().split("\n");
  expect(lines[0]).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  return JSON.parse(lines.at(-1) ?? "null");
}

describe("installed with the newest zod, SDK and TypeScript", { timeout: STEP_TIMEOUT_MS }, () => {
  it("ships dist/, the bin, the README and the LICENSE, and no sources, tests, benches or CI files", async () => {
    const { stdout } = await run("tar", ["-tzf", tarball], work);
    const files = stdout.split("\n").filter(Boolean);
    expect(files).toContain("package/dist/exports/server.js");
    expect(files).toContain("package/dist/exports/client.d.ts");
    expect(files).toContain("package/bin/mcp-tasks.js");
    expect(files).toContain("package/README.md");
    expect(files).toContain("package/LICENSE");
    expect(files.filter((f) => !/^package\/(dist\/|bin\/mcp-tasks\.js$|README\.md$|LICENSE$|package\.json$)/.test(f))).toEqual([]);
  });

  it("ships the declaration file of every module the entries' declarations import, and none they do not reach", async () => {
    // scripts/prune-declarations.mjs drops the declarations no entry reaches at pack time.
    const { stdout } = await run("tar", ["-tzf", tarball], work);
    const shipped = new Set(stdout.split("\n").filter((f) => f.endsWith(".d.ts")));
    const unpacked = join(work, "unpacked");
    mkdirSync(unpacked, { recursive: true });
    await run("tar", ["-xzf", tarball, "-C", unpacked], work);
    const reached = new Set<string>();
    const queue = [...shipped].filter((f) => f.startsWith("package/dist/exports/"));
    const missing: string[] = [];
    while (queue.length > 0) {
      const file = queue.pop() ?? "";
      if (reached.has(file)) continue;
      reached.add(file);
      for (const [, specifier] of readFileSync(join(unpacked, file), "utf8").matchAll(
        /(?:\bfrom|\bimport)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g,
      )) {
        const target = join(file, "..", (specifier ?? "").replace(/\.js$/, ".d.ts"));
        if (shipped.has(target)) queue.push(target);
        else missing.push(`${file} → ${specifier}`);
      }
    }
    expect(missing).toEqual([]);
    expect([...shipped].filter((f) => !reached.has(f))).toEqual([]);
  });

  it("keeps no install-time script in the packed package.json (its files are not shipped)", async () => {
    const { stdout } = await run("tar", ["-xzOf", tarball, "package/package.json"], work);
    const scripts = (JSON.parse(stdout) as { scripts?: Record<string, string> }).scripts ?? {};
    expect(Object.keys(scripts).filter((name) => ["preinstall", "install", "postinstall", "prepare"].includes(name))).toEqual([]);
  });

  it("installs without an engine warning or a script to approve for mcp-tasks itself", () => {
    expect(installOutput).not.toContain("EBADENGINE");
    expect(installOutput).not.toMatch(/mcp-tasks@[^ ]+ \((preinstall|install|postinstall|prepare):/);
  });

  it("installs one zod and one SDK for mcp-tasks: the application's (peer dependencies)", async () => {
    const { stdout } = await run("npm", ["ls", "--all", "--parseable", "zod", "@modelcontextprotocol/sdk"], project);
    const copies = stdout.split("\n").filter((line) => /node_modules\/(zod|@modelcontextprotocol\/sdk)$/.test(line));
    expect(copies.map((line) => line.slice(line.indexOf("node_modules")))).toEqual(
      expect.arrayContaining(["node_modules/zod", "node_modules/@modelcontextprotocol/sdk"]),
    );
    expect(copies.some((line) => line.includes("node_modules/mcp-tasks/node_modules"))).toBe(false);
  });

  it("type-checks and runs the README's tool example, called as a task through TaskClient", async () => {
    expect(await typecheckAndRunExample()).toMatchObject({ content: [{ type: "text", text: "rendered intro (accept)" }] });
  });

  it("loads no native addon, pg, prom-client, jose or OpenTelemetry SDK for mcp-tasks/client (nor for mcp-tasks)", async () => {
    const loaded = await loadedBy(project, `await import("mcp-tasks/client");\nawait import("mcp-tasks");\n`);
    expect(loaded.some((line) => line.includes("/node_modules/mcp-tasks/dist/exports/client.js"))).toBe(true);
    expect(loaded.filter((line) => line.startsWith("addon ") || FORBIDDEN.test(line))).toEqual([]);
  });

  it("the load recorder does see SQLite's addon, pg, prom-client and jose when the entries that need them load", async () => {
    // pg is loaded by the first PostgreSQL store or bus made, not by the import (a SQLite server
    // does not pay for it at start); nothing connects until the store is used.
    const loaded = await loadedBy(
      project,
      `const { sqliteStore } = await import("mcp-tasks/sqlite");\nconst { postgresStore } = await import("mcp-tasks/postgres");\nawait import("mcp-tasks/http");\nawait sqliteStore(":memory:", { driver: "better-sqlite3" }).close();\nawait postgresStore("postgres://nobody@127.0.0.1:1/none").close();\n`,
    );
    expect(loaded.some((line) => line.startsWith("addon ") && line.endsWith("better_sqlite3.node"))).toBe(true);
    for (const name of ["better-sqlite3", "pg", "prom-client", "jose"]) {
      expect(loaded.some((line) => line.includes(`/node_modules/${name}/`))).toBe(true);
    }
  });

  it("answers `mcp-tasks --help` from the installed bin in under a second", async () => {
    const bin = join(project, "node_modules/.bin/mcp-tasks");
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(await runToEnd(bin, ["--help"], project));
    for (const r of runs) {
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("Usage: mcp-tasks");
    }
    // The fastest of three: the CLI's own start-up, less the noise of a shared machine.
    expect(Math.min(...runs.map((r) => r.ms))).toBeLessThan(1000);
  });

  it("serves a TypeScript --tools module through the tsx the project has installed", async () => {
    const served = await runToEnd(
      join(project, "node_modules/.bin/mcp-tasks"),
      ["serve", "--stdio", "--store", "memory", "--tools", "tools.ts"],
      project,
    );
    expect(served.stderr).toContain('"tools":["shout"]');
    expect(served.code).toBe(0);
  });

  it("says how to load a TypeScript --tools module where no tsx is installed", async () => {
    const elsewhere = join(work, "elsewhere");
    mkdirSync(elsewhere, { recursive: true });
    copyFileSync(join(project, "tools.ts"), join(elsewhere, "tools.ts"));
    const served = await runToEnd(
      join(project, "node_modules/.bin/mcp-tasks"),
      ["serve", "--stdio", "--store", "memory", "--tools", "tools.ts"],
      elsewhere,
    );
    expect(served.code).not.toBe(0);
    if (NATIVE_TYPE_STRIPPING) {
      // This Node loads .ts itself: the module loads, and what fails is its own import of zod,
      // which nothing installed beside it provides.
      expect(served.stderr).toContain("Cannot find package 'zod'");
    } else {
      expect(served.stderr).toContain("npm install --save-dev tsx");
      expect(served.stderr).toContain("compile tools.ts to JavaScript");
    }
  });

  it("serves a TaskClient whose SDK Client comes from another copy of the SDK (no instanceof across copies)", async () => {
    writeFileSync(
      join(project, "second-copy.mjs"),
      `import { Client } from "sdk-copy/client/index.js";
import { InMemoryTransport } from "sdk-copy/inMemory.js";
import { z } from "zod";
import { createTaskServer, memoryStore, TaskError } from "mcp-tasks";
import { RemoteError, TaskClient } from "mcp-tasks/client";

const app = createTaskServer({ name: "s", version: "1", store: memoryStore(), pollIntervalMs: 20 });
app.tool("ask", { input: z.object({}), taskSupport: "optional" }, async (_args, ctx) => {
  const answer = await ctx.elicit({ mode: "form", message: "name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } });
  return { content: [{ type: "text", text: "hello " + answer.content?.name }] };
});
app.tool("refuse", { input: z.object({}), taskSupport: "optional" }, async () => {
  throw TaskError.protocol(-32042, "refused", { why: "test" });
});
await app.start();
const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
await app.connect(serverSide);
const client = new Client({ name: "c", version: "1" });
const tasks = new TaskClient(client, { elicit: async () => ({ action: "accept", content: { name: "ada" } }) });
await client.connect(clientSide);
const asked = await tasks.callTool("ask", {}, { task: true });
const refused = await tasks.callTool("refuse", {}, { task: true });
let error = null;
try { await refused.task.result(); } catch (e) { error = e; }
process.stdout.write(JSON.stringify({
  kind: asked.kind,
  result: await asked.task.result(),
  remote: error instanceof RemoteError,
  code: error?.code,
}));
await tasks.close();
await client.close();
await app.close();
process.exit(0);
`,
    );
    const { stdout } = await run(process.execPath, ["second-copy.mjs"], project);
    expect(JSON.parse(stdout)).toMatchObject({
      kind: "task",
      result: { content: [{ type: "text", text: "hello ada" }] },
      remote: true,
      code: -32042,
    });
  });
});

/** The library install's goal (docs/packaging.md, issue 41): no SQLite store used. Printed with the figures and held. */
const LEAN_INSTALL_MAX_S = 30;
const LEAN_INSTALL_MAX_MB = 40;
/** The CLI's optional peers and their trees: none of them comes with a library install. */
const CLI_ONLY =
  /^(better-sqlite3|bindings|prebuild-install|node-gyp|@inquirer\/.*|cli-progress|pino-pretty|@opentelemetry\/(sdk-.*|exporter-.*|instrumentation.*|otlp-.*)|@grpc\/.*|protobufjs)$/;

/** Whether this Node has a node:sqlite the store can use (22.16 and later: `isTransaction`). */
const NODE_SQLITE = await import(["node", "sqlite"].join(":")).then(
  (m: { DatabaseSync: new (path: string) => { isTransaction?: unknown; close(): void } }) => {
    const probe = new m.DatabaseSync(":memory:");
    const fit = typeof probe.isTransaction === "boolean";
    probe.close();
    return fit;
  },
  () => false,
);

describe("the library install: `npm install mcp-tasks` into a project of its own", { timeout: STEP_TIMEOUT_MS }, () => {
  let lean: string;
  let seconds: number;
  let megabytes: number;
  let names: string[];

  beforeAll(async () => {
    lean = join(work, "lean");
    mkdirSync(lean);
    writeFileSync(join(lean, "package.json"), JSON.stringify({ name: "lean", private: true, type: "module" }, null, 2));
    const started = performance.now();
    // The required peers (the SDK, zod, the OpenTelemetry API) come with it, as npm 7 and later install them.
    await run("npm", ["install", "--no-audit", "--no-fund", tarball], lean, INSTALL_TIMEOUT_MS);
    seconds = (performance.now() - started) / 1000;
    const { stdout } = await run("du", ["-sk", "node_modules"], lean);
    megabytes = Number(stdout.split("\t")[0]) / 1024;
    const listed = await run("npm", ["ls", "--all", "--parseable"], lean);
    names = listed.stdout
      .split("\n")
      .filter((line) => line.includes("node_modules/"))
      .map((line) => line.slice(line.lastIndexOf("node_modules/") + "node_modules/".length));
    process.stdout.write(
      `library install into a fresh project: ${seconds.toFixed(1)} s, ${megabytes.toFixed(1)} MB on disk, ${names.length} packages ` +
        `(goal: ≤ ${LEAN_INSTALL_MAX_S} s, ≤ ${LEAN_INSTALL_MAX_MB} MB; npm ${(await run("npm", ["--version"], lean)).stdout.trim()}, ` +
        `node ${process.version}, the user's npm cache)\n`,
    );
  }, INSTALL_TIMEOUT_MS);

  it(`takes at most ${LEAN_INSTALL_MAX_S} s and ${LEAN_INSTALL_MAX_MB} MB on disk`, () => {
    expect(seconds).toBeLessThanOrEqual(LEAN_INSTALL_MAX_S);
    expect(megabytes).toBeLessThanOrEqual(LEAN_INSTALL_MAX_MB);
  });

  it("installs no native addon, prompt, progress-bar, pretty-log or OpenTelemetry SDK package", () => {
    expect(names).toContain("mcp-tasks");
    expect(names).toContain("pg");
    expect(names.filter((name) => CLI_ONLY.test(name))).toEqual([]);
  });

  it(
    NODE_SQLITE
      ? "`mcp-tasks serve` runs from it as installed, on a SQLite file through node:sqlite, with no warning on stderr"
      : "`mcp-tasks serve` on a SQLite file says to install better-sqlite3 on a Node without node:sqlite",
    async () => {
      const served = await runToEnd(
        join(lean, "node_modules/.bin/mcp-tasks"),
        ["serve", "--stdio", "--demo", "--store", "sqlite:tasks.db"],
        lean,
      );
      if (NODE_SQLITE) {
        expect(served.stderr).toContain("serving MCP over stdio");
        expect(served.stderr).not.toContain("Warning");
        expect(served.code).toBe(0);
      } else {
        expect(served.stderr).toContain("npm install better-sqlite3");
        expect(served.code).not.toBe(0);
      }
    },
  );

  it("`mcp-tasks serve` with the memory store runs from it on any Node", async () => {
    const served = await runToEnd(join(lean, "node_modules/.bin/mcp-tasks"), ["serve", "--stdio", "--demo", "--store", "memory"], lean);
    expect(served.stderr).toContain("serving MCP over stdio");
    expect(served.code).toBe(0);
  });
});

describe("installed with the lowest zod and SDK of the peer ranges", { timeout: STEP_TIMEOUT_MS }, () => {
  beforeAll(async () => {
    await run(
      "npm",
      ["install", "--no-audit", "--no-fund", `zod@${lowest("zod")}`, `@modelcontextprotocol/sdk@${lowest("@modelcontextprotocol/sdk")}`],
      project,
      INSTALL_TIMEOUT_MS,
    );
  }, INSTALL_TIMEOUT_MS);

  it("type-checks and runs the README's tool example", async () => {
    const installed = (name: string) =>
      (JSON.parse(readFileSync(join(project, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;
    expect([installed("zod"), installed("@modelcontextprotocol/sdk")]).toEqual([lowest("zod"), lowest("@modelcontextprotocol/sdk")]);
    expect(await typecheckAndRunExample()).toMatchObject({ content: [{ type: "text", text: "rendered intro (accept)" }] });
  });
});
