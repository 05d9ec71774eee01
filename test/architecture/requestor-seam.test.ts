/**
 * The era seam on the requestor side and the wire below it: only the era folders and the registry
 * (src/mcp/requestor/requestor-era-registry.ts) import an era folder; an era's requestor
 * (src/mcp/requestor/rev…) uses its own era's wire (src/mcp/wire/rev…) and no server binding; the
 * wire imports no binding, no requestor and no era seam, and no code of the binding but the
 * trace-context reader (type-only vocabulary aside); and no task-era wire string stands in the
 * requestor's era-neutral code (src/mcp/requestor outside rev…, src/client, src/cli). The rules of
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
      'import { discover } from "../mcp/requestor/rev2026-07-28/discover.js";\nexport const planted = discover;\n',
    );
    await plant(
      "src/cli/planted-wire-import.ts",
      'import type { WireTask } from "../mcp/wire/rev2025-11-25/wire.js";\nexport type Planted = WireTask;\n',
    );
    await plant(
      "src/client/planted-era-import.ts",
      'import { TasksExtRequestor } from "../mcp/requestor/rev2026-07-28/requestor.js";\nexport const planted = TasksExtRequestor;\n',
    );
    await plant(
      "src/gateway/planted-era-import.ts",
      'import { upstreamTasks2025 } from "../mcp/requestor/rev2025-11-25/upstream-tasks.js";\nexport const planted = upstreamTasks2025;\n',
    );
    await plant(
      "src/cli/planted-registry-import.ts",
      'import { featuresOf } from "../mcp/requestor/requestor-eras.js";\nexport const planted = featuresOf;\n',
    );
    await plant(
      "src/gateway/planted-registry-import.ts",
      'import { SESSION_REQUESTOR } from "../mcp/requestor/requestor-eras.js";\nexport const planted = SESSION_REQUESTOR;\n',
    );
    await plant(
      "src/client/planted-list-import.ts",
      'import * as eras from "../mcp/requestor/requestor-era-registry.js";\nexport const planted = eras;\n',
    );
    await plant(
      "src/mcp/requestor/rev2026-07-28/planted-other-wire.ts",
      'import { RELATED_TASK_META_KEY } from "../../wire/rev2025-11-25/wire.js";\nexport const planted = RELATED_TASK_META_KEY;\n',
    );
    await plant(
      "src/mcp/requestor/rev2025-11-25/planted-own-binding.ts",
      'import { tasksGet } from "../../rev2025-11-25/tasks-get.js";\nexport const planted = tasksGet;\n',
    );
    await plant(
      "src/mcp/requestor/planted-era-seam.ts",
      'import { SESSION_ERA } from "../eras.js";\nexport const planted = SESSION_ERA;\n',
    );
    await plant(
      "src/mcp/wire/rev2025-11-25/planted-requestor.ts",
      'import { peerOf } from "../../requestor/rev2025-11-25/peer.js";\nexport const planted = peerOf;\n',
    );
    await plant(
      "src/mcp/wire/rev2025-11-25/planted-binding.ts",
      'import { tasksGet } from "../../rev2025-11-25/tasks-get.js";\nexport const planted = tasksGet;\n',
    );
    await plant("src/mcp/wire/planted-seam.ts", 'import type { TaskEra } from "../era.js";\nexport type Planted = TaskEra;\n');
    await plant(
      "src/mcp/wire/rev2026-07-28/planted-io.ts",
      'import { requestedWebhook } from "../../webhook-request.js";\nexport const planted = requestedWebhook;\n',
    );
    await plant(
      "src/mcp/wire/rev2026-07-28/planted-type.ts",
      'import type { RegisteredTool } from "../../tool-definition.js";\nexport type Planted = RegisteredTool;\n',
    );
    found = await violations(copy);
  }, 90_000);

  afterAll(async () => {
    if (copy) await rm(copy, { recursive: true, force: true });
  });

  it("the real tree breaks none of the rules", () => {
    expect(found.filter((v) => !v.from.includes("planted"))).toEqual([]);
  });

  it("a requestor era folder imported from src/cli/ fails, and so does an era's wire", () => {
    expect(found).toContainEqual({ rule: RULE, from: "src/cli/planted-era-import.ts", to: "src/mcp/requestor/rev2026-07-28/discover.ts" });
    expect(found).toContainEqual({ rule: RULE, from: "src/cli/planted-wire-import.ts", to: "src/mcp/wire/rev2025-11-25/wire.ts" });
  });

  it("a requestor era folder imported from src/client/ or src/gateway/ fails", () => {
    expect(found).toContainEqual({
      rule: RULE,
      from: "src/client/planted-era-import.ts",
      to: "src/mcp/requestor/rev2026-07-28/requestor.ts",
    });
    expect(found).toContainEqual({
      rule: RULE,
      from: "src/gateway/planted-era-import.ts",
      to: "src/mcp/requestor/rev2025-11-25/upstream-tasks.ts",
    });
  });

  it("the registry and what it lists may be imported from anywhere on the requestor side, the gateway included", () => {
    const allowed = ["src/cli/planted-registry-import.ts", "src/gateway/planted-registry-import.ts", "src/client/planted-list-import.ts"];
    expect(found.filter((v) => allowed.includes(v.from))).toEqual([]);
  });

  it("a requestor era folder using another era's wire, or any binding, fails", () => {
    expect(found).toContainEqual({
      rule: "requestor-era-isolation",
      from: "src/mcp/requestor/rev2026-07-28/planted-other-wire.ts",
      to: "src/mcp/wire/rev2025-11-25/wire.ts",
    });
    expect(found).toContainEqual({
      rule: "requestor-era-isolation",
      from: "src/mcp/requestor/rev2025-11-25/planted-own-binding.ts",
      to: "src/mcp/rev2025-11-25/tasks-get.ts",
    });
  });

  it("the requestor's era-neutral code reaching the server's era seam fails", () => {
    expect(found).toContainEqual({
      rule: "requestor-below-bindings",
      from: "src/mcp/requestor/planted-era-seam.ts",
      to: "src/mcp/eras.ts",
    });
  });

  it("the wire importing a requestor, a binding or the era seam fails", () => {
    expect(found).toContainEqual({
      rule: "wire-below-bindings",
      from: "src/mcp/wire/rev2025-11-25/planted-requestor.ts",
      to: "src/mcp/requestor/rev2025-11-25/peer.ts",
    });
    expect(found).toContainEqual({
      rule: "wire-below-bindings",
      from: "src/mcp/wire/rev2025-11-25/planted-binding.ts",
      to: "src/mcp/rev2025-11-25/tasks-get.ts",
    });
    expect(found).toContainEqual({ rule: "wire-below-bindings", from: "src/mcp/wire/planted-seam.ts", to: "src/mcp/era.ts" });
  });

  it("the wire importing code of the binding (not only its types) fails", () => {
    expect(found).toContainEqual({
      rule: "wire-is-pure",
      from: "src/mcp/wire/rev2026-07-28/planted-io.ts",
      to: "src/mcp/webhook-request.ts",
    });
    expect(found.filter((v) => v.from === "src/mcp/wire/rev2026-07-28/planted-type.ts")).toEqual([]);
  });
});

describe("no task-era wire string in the requestor's era-neutral code (eslint)", () => {
  const eslint = new ESLint({ cwd: ROOT });
  const wireMessages = async (text: string, path: string) => {
    const [report] = await eslint.lintText(text, { filePath: join(ROOT, path) });
    return report!.messages.filter((m) => m.ruleId === "no-restricted-syntax").map((m) => m.message);
  };

  it("the real src/client, src/cli and src/mcp/requestor outside its era folders hold none", { timeout: 60_000 }, async () => {
    const reports = await eslint.lintFiles([join(ROOT, "src/client"), join(ROOT, "src/cli"), join(ROOT, "src/mcp/requestor")]);
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
    ["src/mcp/requestor/planted.ts", 'export const method = "tasks/get";\n', "a tasks/* method name"],
  ])("%s spelling %s fails", async (path, text, what) => {
    expect(await wireMessages(text, path)).toEqual([expect.stringContaining(what)]);
  });

  it("the same strings inside a requestor or wire era folder pass, and core MCP names pass everywhere", async () => {
    expect(await wireMessages('export const method = "tasks/get";\n', "src/mcp/requestor/rev2026-07-28/planted.ts")).toEqual([]);
    expect(await wireMessages('export const method = "tasks/get";\n', "src/mcp/wire/rev2026-07-28/planted.ts")).toEqual([]);
    expect(
      await wireMessages('export const method = "tools/list";\nexport const note = "notifications/progress";\n', "src/cli/planted.ts"),
    ).toEqual([]);
  });
});
