/**
 * The era seam on the requestor side: only the era folders and the registry
 * (src/client/requestor-era-registry.ts) import an era folder, and no task-era wire string stands in the
 * requestor's era-neutral code (src/client outside rev…, src/cli). The rules of
 * `.dependency-cruiser.mjs` and `eslint.config.js`, run on the real tree and on planted files
 * (imports: in a copy of src/ under .tmp/; wire strings: linted from memory). src/ is never touched.
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
const RULE = "era-registry";

async function violations(baseDir: string): Promise<Array<{ rule: string; from: string; to: string }>> {
  const options = await extractDepcruiseOptions(join(ROOT, ".dependency-cruiser.mjs"));
  const { output } = await cruise(["src"], { ...options, baseDir }, {}, { tsConfig: extractTSConfig(join(ROOT, "tsconfig.json")) });
  return (output as ICruiseResult).summary.violations.map((v) => ({ rule: v.rule.name, from: v.from, to: v.to }));
}

describe("requestor era imports go through the registry (dependency-cruiser)", () => {
  let copy = "";
  let found: Array<{ rule: string; from: string; to: string }> = [];

  beforeAll(async () => {
    await mkdir(join(ROOT, ".tmp"), { recursive: true });
    copy = await mkdtemp(join(ROOT, ".tmp", "requestor-seam-"));
    await cp(join(ROOT, "src"), join(copy, "src"), { recursive: true });
    const plant = (path: string, text: string) => writeFile(join(copy, path), text);
    await plant(
      "src/cli/planted-era-import.ts",
      'import { discover } from "../client/rev2026-07-28/discover.js";\nexport const planted = discover;\n',
    );
    await plant(
      "src/cli/planted-wire-import.ts",
      'import type { WireTask } from "../mcp/rev2025-11-25/wire.js";\nexport type Planted = WireTask;\n',
    );
    await plant(
      "src/client/planted-era-import.ts",
      'import { TasksExtRequestor } from "./rev2026-07-28/requestor.js";\nexport const planted = TasksExtRequestor;\n',
    );
    await plant(
      "src/cli/planted-registry-import.ts",
      'import { featuresOf } from "../client/requestor-eras.js";\nexport const planted = featuresOf;\n',
    );
    await plant(
      "src/client/planted-list-import.ts",
      'import * as eras from "./requestor-era-registry.js";\nexport const planted = eras;\n',
    );
    await plant(
      "src/client/rev2026-07-28/planted-other-binding.ts",
      'import { RELATED_TASK_META_KEY } from "../../mcp/rev2025-11-25/wire.js";\nexport const planted = RELATED_TASK_META_KEY;\n',
    );
    found = await violations(copy);
  }, 90_000);

  afterAll(async () => {
    if (copy) await rm(copy, { recursive: true, force: true });
  });

  it("the real tree has no era import outside the era folders and the registry", () => {
    expect(found.filter((v) => v.rule === RULE && !v.from.includes("planted"))).toEqual([]);
  });

  it("an era folder imported from src/cli/ fails, the requestor's or the binding's", () => {
    expect(found).toContainEqual({ rule: RULE, from: "src/cli/planted-era-import.ts", to: "src/client/rev2026-07-28/discover.ts" });
    expect(found).toContainEqual({ rule: RULE, from: "src/cli/planted-wire-import.ts", to: "src/mcp/rev2025-11-25/wire.ts" });
  });

  it("an era folder imported from src/client/ outside the registry fails", () => {
    expect(found).toContainEqual({ rule: RULE, from: "src/client/planted-era-import.ts", to: "src/client/rev2026-07-28/requestor.ts" });
  });

  it("the registry and what it lists may be imported from anywhere on the requestor side", () => {
    expect(found.filter((v) => v.from === "src/cli/planted-registry-import.ts" || v.from === "src/client/planted-list-import.ts")).toEqual(
      [],
    );
  });

  it("a requestor era folder using another era's binding in src/mcp fails", () => {
    expect(found).toContainEqual({
      rule: "requestor-era-binding",
      from: "src/client/rev2026-07-28/planted-other-binding.ts",
      to: "src/mcp/rev2025-11-25/wire.ts",
    });
  });
});

describe("no task-era wire string in the requestor's era-neutral code (eslint)", () => {
  const eslint = new ESLint({ cwd: ROOT });
  const wireMessages = async (text: string, path: string) => {
    const [report] = await eslint.lintText(text, { filePath: join(ROOT, path) });
    return report!.messages.filter((m) => m.ruleId === "no-restricted-syntax").map((m) => m.message);
  };

  it("the real src/client and src/cli hold none", { timeout: 60_000 }, async () => {
    const reports = await eslint.lintFiles([join(ROOT, "src/client"), join(ROOT, "src/cli")]);
    expect(
      reports.flatMap((r) => r.messages.filter((m) => m.ruleId === "no-restricted-syntax").map((m) => `${r.filePath}: ${m.message}`)),
    ).toEqual([]);
  });

  it.each([
    ["src/cli/planted.ts", 'export const method = "tasks/get";\n', "a tasks/* method name"],
    ["src/cli/planted.ts", 'export const note = "notifications/tasks/status";\n', "a task notification name"],
    ["src/client/planted.ts", 'export const key = "resultType";\n', "the resultType field"],
    ["src/client/planted.ts", "export const key = `io.modelcontextprotocol/related-task`;\n", "an io.modelcontextprotocol/ _meta key"],
    ["src/cli/planted.ts", 'export const key = "mcp-tasks/progress";\n', "one of our own _meta keys"],
  ])("%s spelling %s fails", async (path, text, what) => {
    expect(await wireMessages(text, path)).toEqual([expect.stringContaining(what)]);
  });

  it("the same strings inside a requestor era folder pass, and core MCP names pass everywhere", async () => {
    expect(await wireMessages('export const method = "tasks/get";\n', "src/client/rev2026-07-28/planted.ts")).toEqual([]);
    expect(
      await wireMessages('export const method = "tools/list";\nexport const note = "notifications/progress";\n', "src/cli/planted.ts"),
    ).toEqual([]);
  });
});
