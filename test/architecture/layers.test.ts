/**
 * The layer table: the import rules of `.dependency-cruiser.mjs` and the wire-string
 * rule of `eslint.config.js`, run on the real tree and shown to fail on planted violations.
 * Planting happens in a copy of src/ under .tmp/ (imports) or in memory (wire strings); src/ is never touched.
 */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { cruise, type ICruiseResult } from "dependency-cruiser";
import extractDepcruiseOptions from "dependency-cruiser/config-utl/extract-depcruise-options";
import extractTSConfig from "dependency-cruiser/config-utl/extract-ts-config";
import { ESLint } from "eslint";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const WIRE_RULE = "no-restricted-syntax";

/** Wire strings allowed to stand in the lower layers, each as "file string": none (the era seam keeps them in the era folders). */
const KNOWN_WIRE_STRINGS: readonly string[] = [];

interface Violation {
  rule: string;
  from: string;
  to: string;
}

/**
 * Import rules the real tree is allowed to break (none); a new violation fails the test below.
 */
const KNOWN_IMPORT_VIOLATIONS: readonly Violation[] = [];

/** Cruises `<baseDir>/src` with the repository's configuration and tsconfig. */
async function importViolations(baseDir: string): Promise<Violation[]> {
  const options = await extractDepcruiseOptions(join(ROOT, ".dependency-cruiser.mjs"));
  const tsConfig = extractTSConfig(join(ROOT, "tsconfig.json"));
  const { output } = await cruise(["src"], { ...options, baseDir }, {}, { tsConfig });
  const result = output as ICruiseResult;
  return result.summary.violations.map((v) => ({ rule: v.rule.name, from: v.from, to: v.to }));
}

const eslint = new ESLint({ cwd: ROOT });

/** The wire strings the rule reports in some text, as "file string" (the string read back from the reported position). */
async function wireStrings(text: string, filePath: string): Promise<string[]> {
  const [report] = await eslint.lintText(text, { filePath: join(ROOT, filePath) });
  const lines = text.split("\n");
  return report!.messages
    .filter((m) => m.ruleId === WIRE_RULE)
    .map((m) => {
      const at = lines[m.line - 1]!.slice(m.column - 1);
      const literal = /^["'`}]([^"'`$]*)/.exec(at)?.[1] ?? at;
      return `${filePath} ${literal}`;
    });
}

describe("import rules (dependency-cruiser)", () => {
  let real: Violation[] = [];
  beforeAll(async () => {
    real = await importViolations(ROOT);
  }, 60_000);

  it("the real tree of src/ breaks no import rule beyond the known ones", () => {
    expect(real).toEqual(KNOWN_IMPORT_VIOLATIONS);
  });

  describe("planted violations in a copy of src/", () => {
    let copy = "";
    let found: Violation[] = [];

    beforeAll(async () => {
      // Inside the repository so the copy resolves packages from its node_modules, as src/ does.
      await mkdir(join(ROOT, ".tmp"), { recursive: true });
      copy = await mkdtemp(join(ROOT, ".tmp", "layers-"));
      await cp(join(ROOT, "src"), join(copy, "src"), { recursive: true });
      const plant = async (path: string, text: string) => {
        await mkdir(dirname(join(copy, path)), { recursive: true });
        await writeFile(join(copy, path), text);
      };
      await plant(
        "src/core/planted-upward.ts",
        'import type { TaskServer } from "../mcp/task-server.js";\nexport type Planted = TaskServer;\n',
      );
      await plant(
        "src/events/planted-store.ts",
        'import type { TaskStore } from "../store/task-store.js";\nexport type Planted = TaskStore;\n',
      );
      await plant(
        "src/runtime/planted-sdk.ts",
        'import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";\nexport type Planted = AuthInfo;\n',
      );
      await plant("src/runtime/planted-cycle-a.ts", 'import { b } from "./planted-cycle-b.js";\nexport const a = (): number => b() + 1;\n');
      await plant("src/runtime/planted-cycle-b.ts", 'import { a } from "./planted-cycle-a.js";\nexport const b = (): number => a() - 1;\n');
      await plant("src/store/planted-test-import.ts", 'export { storeContract } from "../../test/store/contract.js";\n');
      await plant("test/store/contract.ts", "export const storeContract = 1;\n");
      await plant(
        "src/mcp/rev2025-11-25/planted-era.ts",
        'import { later } from "../rev2026-07-28/planted-later.js";\nexport const planted = later;\n',
      );
      await plant("src/mcp/rev2026-07-28/planted-later.ts", "export const later = 1;\n");
      await plant(
        "src/mcp/rev2026-07-28/planted-other-wire.ts",
        'import { RELATED_TASK_META_KEY } from "../wire/rev2025-11-25/wire.js";\nexport const planted = RELATED_TASK_META_KEY;\n',
      );
      await plant(
        "src/mcp/wire/rev2025-11-25/planted-other-wire.ts",
        'import { RESULT_TYPE } from "../rev2026-07-28/wire.js";\nexport const planted = RESULT_TYPE;\n',
      );
      found = await importViolations(copy);
    }, 60_000);

    afterAll(async () => {
      if (copy) await rm(copy, { recursive: true, force: true });
    });

    it("an upward import (core importing mcp) fails the layer rule", () => {
      expect(found).toContainEqual({ rule: "layer-core", from: "src/core/planted-upward.ts", to: "src/mcp/task-server.ts" });
    });

    it("events importing store fails: store and events import only core", () => {
      expect(found).toContainEqual({ rule: "layer-events", from: "src/events/planted-store.ts", to: "src/store/task-store.ts" });
    });

    it("an SDK import (type-only) in runtime fails", () => {
      expect(found).toContainEqual(expect.objectContaining({ rule: "no-sdk-below-mcp", from: "src/runtime/planted-sdk.ts" }));
    });

    it("an import cycle fails", () => {
      expect(found.filter((v) => v.rule === "no-circular").map((v) => v.from)).toEqual(
        expect.arrayContaining([expect.stringMatching(/^src\/runtime\/planted-cycle-[ab]\.ts$/)]),
      );
    });

    it("an import of test/ from src/ fails", () => {
      expect(found).toContainEqual({ rule: "no-tests-from-src", from: "src/store/planted-test-import.ts", to: "test/store/contract.ts" });
    });

    it("one era's folder importing another's (binding or wire) fails, an import inside the same era does not", () => {
      expect(found).toContainEqual({
        rule: "era-isolation",
        from: "src/mcp/rev2025-11-25/planted-era.ts",
        to: "src/mcp/rev2026-07-28/planted-later.ts",
      });
      expect(found).toContainEqual({
        rule: "era-isolation",
        from: "src/mcp/rev2026-07-28/planted-other-wire.ts",
        to: "src/mcp/wire/rev2025-11-25/wire.ts",
      });
      expect(found.filter((v) => v.rule === "era-isolation")).toHaveLength(2);
      expect(found).toContainEqual({
        rule: "wire-isolation",
        from: "src/mcp/wire/rev2025-11-25/planted-other-wire.ts",
        to: "src/mcp/wire/rev2026-07-28/wire.ts",
      });
    });

    it("the copy reports what the real tree does, and besides that only the planted files", () => {
      expect(found.filter((v) => !v.from.includes("planted"))).toEqual(real);
    });
  });
});

describe("wire strings below src/mcp (eslint no-restricted-syntax)", () => {
  it("the real core, store, events and runtime hold no wire string beyond the known ones", { timeout: 60_000 }, async () => {
    const reports = await eslint.lintFiles(["src/core", "src/store", "src/events", "src/runtime"].map((dir) => join(ROOT, dir)));
    const found: string[] = [];
    for (const report of reports) {
      const path = report.filePath.slice(ROOT.length + 1);
      if (report.messages.some((m) => m.ruleId === WIRE_RULE))
        found.push(...(await wireStrings(await readFile(report.filePath, "utf8"), path)));
    }
    expect(found.sort()).toEqual([...KNOWN_WIRE_STRINGS].sort());
  });

  describe("planted in a copy of the engine", () => {
    let engine = "";
    let baseline: string[] = [];
    const ENGINE = "src/runtime/task-engine.ts";

    beforeAll(async () => {
      engine = await readFile(join(ROOT, ENGINE), "utf8");
      baseline = await wireStrings(engine, ENGINE);
    });

    it.each([
      ["a tasks/* method", '"tasks/update"', "tasks/update"],
      ["a related-task _meta key", '"io.modelcontextprotocol/related-task"', "io.modelcontextprotocol/related-task"],
      ["the resultType field", '"resultType"', "resultType"],
      ["a notification method", "'notifications/tasks/status'", "notifications/tasks/status"],
      ["a sampling method", '"sampling/createMessage"', "sampling/createMessage"],
      ["a tools/* method in a template", "`tools/call`", "tools/call"],
    ])("%s fails the rule", async (_what, literal, value) => {
      const planted = `${engine}\nexport const PLANTED_LABEL = ${literal};\n`;
      expect(await wireStrings(planted, ENGINE)).toEqual([...baseline, `${ENGINE} ${value}`]);
    });

    it("the same strings are allowed in the binding's era folders (src/mcp/rev…)", async () => {
      const text = 'export const M = ["tasks/get", "notifications/tasks/status", "resultType", `io.modelcontextprotocol/related-task`];\n';
      expect(await wireStrings(text, "src/mcp/rev2025-11-25/planted.ts")).toEqual([]);
    });
  });
});
