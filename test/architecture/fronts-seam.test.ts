/**
 * The era seam on the server's side: src/gateway, src/web, src/http and the binding outside its
 * era folders (src/mcp) reach the eras through their interfaces (src/mcp/era.ts, the list
 * src/mcp/eras.ts reads from the registry src/mcp/era-registry.ts), never an era folder, and spell
 * no task-era wire string. The lint rules that hold this (eslint.config.js, .dependency-cruiser.mjs),
 * run on the real tree and on planted files: a wire string in a file written into src/gateway/
 * for the run and removed after it, an era import in a copy of src/ under .tmp/.
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { cruise, type ICruiseResult } from "dependency-cruiser";
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";
import { ESLint } from "eslint";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const eslint = new ESLint({ cwd: ROOT });
const FRONTS = ["src/gateway", "src/web", "src/http"];

/** The wire-string reports of the rule, as "line: message". */
async function wireReports(paths: string[]): Promise<string[]> {
  const reports = await eslint.lintFiles(paths.map((path) => join(ROOT, path)));
  return reports.flatMap((report) =>
    report.messages
      .filter((m) => m.ruleId === "no-restricted-syntax" && /is a wire string/.test(m.message))
      .map((m) => `${report.filePath.slice(ROOT.length + 1)}:${m.line}: ${m.message}`),
  );
}

describe("task-era wire strings on the server's fronts (eslint)", () => {
  it("the real gateway, web view and HTTP layer spell none", { timeout: 60_000 }, async () => {
    expect(await wireReports(FRONTS)).toEqual([]);
  });

  it.each([
    ["a tasks/* method", '"tasks/get"'],
    ["a task notification", "`notifications/tasks/status`"],
    ["the related-task _meta key", '"io.modelcontextprotocol/related-task"'],
    ["the resultType field", '"resultType"'],
    ["a field of the input rounds", '"inputRequests"'],
  ])("%s planted in src/gateway/ fails the rule", { timeout: 60_000 }, async (_what, literal) => {
    const path = `src/gateway/planted-wire-${process.pid}.ts`;
    await writeFile(join(ROOT, path), `export const PLANTED = ${literal};\n`);
    try {
      const found = await wireReports([path]);
      expect(found).toHaveLength(1);
      expect(found[0]).toMatch(new RegExp(`^${path}:1: .* is a wire string: it belongs in an era folder`));
    } finally {
      await rm(join(ROOT, path), { force: true });
    }
  });

  it("core MCP names, the same in every era, stay allowed there", async () => {
    const path = `src/gateway/planted-core-${process.pid}.ts`;
    await writeFile(join(ROOT, path), 'export const PLANTED = ["tools/call", "elicitation/create", "notifications/progress"];\n');
    try {
      expect(await wireReports([path])).toEqual([]);
    } finally {
      await rm(join(ROOT, path), { force: true });
    }
  });
});

describe("era folders from the server's fronts (dependency-cruiser)", () => {
  let copy = "";
  let found: Array<{ rule: string; from: string; to: string }> = [];

  beforeAll(async () => {
    await mkdir(join(ROOT, ".tmp"), { recursive: true });
    copy = await mkdtemp(join(ROOT, ".tmp", "fronts-"));
    await cp(join(ROOT, "src"), join(copy, "src"), { recursive: true });
    await writeFile(
      join(copy, "src/gateway/planted-era.ts"),
      'import { RELATED_TASK_META_KEY } from "../mcp/wire/rev2025-11-25/wire.js";\nexport const planted = RELATED_TASK_META_KEY;\n',
    );
    await writeFile(
      join(copy, "src/http/planted-era.ts"),
      'import { tasksExt } from "../mcp/rev2026-07-28/era.js";\nexport const planted = tasksExt;\n',
    );
    await writeFile(
      join(copy, "src/web/planted-registry.ts"),
      'import { SESSION_ERA } from "../mcp/eras.js";\nexport const planted = SESSION_ERA;\n',
    );
    // Where the binding's era-neutral files stand (tool-context.ts, session-server.ts, sdk-server/).
    await writeFile(
      join(copy, "src/mcp/planted-era.ts"),
      'import { setLevel } from "./rev2025-11-25/set-log-level.js";\nexport const planted = setLevel;\n',
    );
    await writeFile(
      join(copy, "src/mcp/sdk-server/planted-era.ts"),
      'import { tasksExt } from "../rev2026-07-28/era.js";\nexport const planted = tasksExt;\n',
    );
    await writeFile(
      join(copy, "src/mcp/planted-wire.ts"),
      'import { wire20251125 } from "./wire/rev2025-11-25/codec.js";\nexport const planted = wire20251125;\n',
    );
    await writeFile(
      join(copy, "src/mcp/planted-registry.ts"),
      'import { rev20251125 } from "./era-registry.js";\nexport const planted = rev20251125;\n',
    );
    const options = await extractDepcruiseOptions(join(ROOT, ".dependency-cruiser.mjs"));
    const { output } = await cruise(["src"], { ...options, baseDir: copy }, {}, { tsConfig: extractTSConfig(join(ROOT, "tsconfig.json")) });
    found = (output as ICruiseResult).summary.violations.map((v) => ({ rule: v.rule.name, from: v.from, to: v.to }));
  }, 120_000);

  afterAll(async () => {
    if (copy) await rm(copy, { recursive: true, force: true });
  });

  it("an import of an era folder from src/gateway/ or src/http/ fails; the registry is the way in", () => {
    const fronts = found.filter((v) => v.rule === "era-registry");
    expect(fronts).toEqual(
      expect.arrayContaining([
        { rule: "era-registry", from: "src/gateway/planted-era.ts", to: "src/mcp/wire/rev2025-11-25/wire.ts" },
        { rule: "era-registry", from: "src/http/planted-era.ts", to: "src/mcp/rev2026-07-28/era.ts" },
      ]),
    );
    expect(fronts.filter((v) => !v.from.includes("planted"))).toEqual([]);
    expect(found.filter((v) => v.from === "src/web/planted-registry.ts")).toEqual([]);
  });

  it("an import of an era folder from the binding outside the era folders fails (src/mcp, src/mcp/sdk-server)", () => {
    expect(found).toEqual(
      expect.arrayContaining([
        { rule: "era-registry", from: "src/mcp/planted-era.ts", to: "src/mcp/rev2025-11-25/set-log-level.ts" },
        { rule: "era-registry", from: "src/mcp/sdk-server/planted-era.ts", to: "src/mcp/rev2026-07-28/era.ts" },
        // An era's codec is reached through its binding (TaskEra.wire), not imported by name.
        { rule: "era-registry", from: "src/mcp/planted-wire.ts", to: "src/mcp/wire/rev2025-11-25/codec.ts" },
      ]),
    );
  });

  it("only src/mcp/era-registry.ts imports the server's era folders; importing the registry itself passes", () => {
    expect(found.filter((v) => v.from === "src/mcp/planted-registry.ts")).toEqual([]);
  });
});

describe("task-era wire strings in the binding outside its era folders (eslint)", () => {
  it("the real src/mcp outside its era folders (rev…, wire/rev…, requestor/rev…) spells none", { timeout: 60_000 }, async () => {
    const reports = await eslint.lintFiles([join(ROOT, "src/mcp")]);
    expect(
      reports
        .filter((r) => !/\/src\/mcp\/(wire\/|requestor\/)?rev[^/]+\//.test(r.filePath))
        .flatMap((r) =>
          r.messages
            .filter((m) => m.ruleId === "no-restricted-syntax" && /is a wire string/.test(m.message))
            .map((m) => `${r.filePath}:${m.line}`),
        ),
    ).toEqual([]);
  });

  it("a tasks/* method name in src/mcp/tool-context.ts's place fails, in an era folder it passes", async () => {
    const messages = async (path: string) =>
      (await eslint.lintText('export const method = "tasks/result";\n', { filePath: join(ROOT, path) }))[0]!.messages
        .filter((m) => m.ruleId === "no-restricted-syntax")
        .map((m) => m.message);
    expect(await messages("src/mcp/planted.ts")).toEqual([expect.stringContaining("a tasks/* method name is a wire string")]);
    expect(await messages("src/mcp/rev2025-11-25/planted.ts")).toEqual([]);
    expect(await messages("src/mcp/wire/rev2025-11-25/planted.ts")).toEqual([]);
    expect(await messages("src/mcp/wire/planted.ts")).toEqual([expect.stringContaining("a tasks/* method name is a wire string")]);
  });
});
