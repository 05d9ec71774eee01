/**
 * The engine's surface: above the runtime, the store is read through the engine's read port
 * (`engine.inspect`) and written through its operations. The lint rule of `eslint.config.js` that
 * holds this, run on the real tree and on planted text (in memory: src/ is never touched).
 */
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const RULE = "no-restricted-syntax";
const eslint = new ESLint({ cwd: ROOT });

async function reported(text: string, filePath: string): Promise<number[]> {
  const [report] = await eslint.lintText(text, { filePath: join(ROOT, filePath) });
  return report!.messages.filter((m) => m.ruleId === RULE && /engine\.inspect/.test(m.message)).map((m) => m.line);
}

const HEADER = (path: string): string =>
  `import type { TaskEngine } from "${path.startsWith("src/runtime/") ? "." : "../runtime"}/task-engine.js";\n`;

describe("the store above the runtime (eslint no-restricted-syntax)", () => {
  it("no file above the runtime reaches the engine's store except to close it", { timeout: 60_000 }, async () => {
    const dirs = [
      "src/metrics",
      "src/mcp",
      "src/http",
      "src/web",
      "src/gateway",
      "src/client",
      "src/cli",
      "src/demo",
      "src/testing",
      "src/exports",
    ];
    const reports = await eslint.lintFiles(dirs.map((dir) => join(ROOT, dir)));
    const found = reports.flatMap((report) =>
      report.messages.filter((m) => m.ruleId === RULE && /engine\.inspect/.test(m.message)).map(() => report.filePath),
    );
    expect(found).toEqual([]);
  });

  it.each([
    [
      "a read through engine.store in the web view",
      "src/web/planted.ts",
      'export const a = (engine: TaskEngine) => engine.store.get("x", { any: true });\n',
    ],
    [
      "a read through app.engine.store in the HTTP layer",
      "src/http/planted.ts",
      "export const a = (app: { engine: TaskEngine }) => app.engine.store.secret();\n",
    ],
    [
      "handing the store on in the gateway",
      "src/gateway/planted.ts",
      "export const a = (app: { engine: TaskEngine }) => ({ store: app.engine.store });\n",
    ],
    [
      "passing the store as an argument in metrics",
      "src/metrics/planted.ts",
      "export const a = (engine: TaskEngine, use: (s: unknown) => void) => use(engine.store);\n",
    ],
  ])("%s fails the rule", async (_what, path, text) => {
    expect(await reported(HEADER(path) + text, path)).toEqual([2]);
  });

  it("closing the store it opened, and reading through engine.inspect, pass", async () => {
    const text = `${HEADER("src/mcp/planted.ts")}export const a = (engine: TaskEngine) => engine.store.close();\nexport const b = (engine: TaskEngine) => engine.inspect.task("x");\n`;
    expect(await reported(text, "src/mcp/planted.ts")).toEqual([]);
  });

  it("the runtime itself keeps its store", async () => {
    expect(
      await reported(
        `${HEADER("src/runtime/planted.ts")}export const a = (engine: TaskEngine) => engine.store.get("x", { any: true });\n`,
        "src/runtime/planted.ts",
      ),
    ).toEqual([]);
  });
});
