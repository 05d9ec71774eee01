/**
 * Which lane a test file runs in (vitest.config.ts's projects), decided from what the file does,
 * so a new file is classified without being listed anywhere:
 * - `integration`: the file, or any module under test/ it imports (followed through relative
 *   imports), starts a process or opens a connection to an outside service: it loads one of
 *   {@link OUTSIDE_MODULES} (node:child_process, the pg driver, playwright, the SDK's stdio client
 *   transport, a Redis client), or its code names one of {@link OUTSIDE_CODE} (`process.execPath`,
 *   the node binary handed to a spawn; `StdioClientTransport`). The PostgreSQL fixtures
 *   (test/support/postgres.ts imports pg, private-postgres.ts spawns a server), tmux, nginx and
 *   HAProxy helpers (they spawn) are reached through the imports;
 * - `unit`: everything else — in-process servers, SQLite files, real HTTP on 127.0.0.1.
 * Only code counts (test/module-code.ts): a `postgres://` URL, a `tmux` or `redis` in a string or
 * a comment moves no file. A type-only import loads nothing and counts for nothing.
 * `npm test` runs both lanes; `npm run test:unit` the first alone.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { moduleCode } from "./module-code.js";

/** Modules whose loading means processes or outside services (matched against import specifiers). */
export const OUTSIDE_MODULES: readonly RegExp[] = [
  /^(node:)?child_process$/,
  /^(node:)?cluster$/,
  /^pg(-[\w-]+)?(\/|$)/,
  /^playwright(-core)?(\/|$)/,
  /\/client\/stdio(\.js)?$/,
  /^(io)?redis(\/|$)/,
];

/** Names in code (never in a string or a comment) that mean a spawned process. */
export const OUTSIDE_CODE: readonly RegExp[] = [/\bprocess\.execPath\b/, /\bStdioClientTransport\b/];

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

/** The file on disk a relative import names (`.js` in the source is the `.ts` beside it, when there is one). */
function resolved(from: string, specifier: string): string {
  const target = resolve(dirname(from), specifier);
  const source = target.endsWith(".js") ? `${target.slice(0, -3)}.ts` : target;
  return existsSync(source) ? source : target;
}

/** Whether the module `text` itself starts a process or opens a connection, and the relative imports it follows. */
export function outsideUse(text: string): { outside: boolean; relativeImports: string[] } {
  const { imports, code } = moduleCode(text);
  const outside =
    imports.some((specifier) => OUTSIDE_MODULES.some((module) => module.test(specifier))) || OUTSIDE_CODE.some((name) => name.test(code));
  return { outside, relativeImports: imports.filter((specifier) => specifier.startsWith("./") || specifier.startsWith("../")) };
}

/** Whether `file` or a module under `testRoot` it imports needs the outside (memoized in `seen`). */
function needsOutside(file: string, testRoot: string, seen: Map<string, boolean>): boolean {
  const known = seen.get(file);
  if (known !== undefined) return known;
  seen.set(file, false); // an import cycle adds nothing new
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return false; // not a file of ours (a directory index, a file that is not there): read as harmless
  }
  const { outside, relativeImports } = outsideUse(text);
  let result = outside;
  for (const specifier of relativeImports) {
    if (result) break;
    const target = resolved(file, specifier);
    if (!relative(testRoot, target).startsWith("..")) result = needsOutside(target, testRoot, seen);
  }
  seen.set(file, result);
  return result;
}

/** The test files of each lane, as paths relative to `root` (the repository). */
export function lanes(root: string): { unit: string[]; integration: string[] } {
  const testRoot = join(root, "test");
  const seen = new Map<string, boolean>();
  const unit: string[] = [];
  const integration: string[] = [];
  for (const file of testFiles(testRoot).sort()) {
    (needsOutside(file, testRoot, seen) ? integration : unit).push(relative(root, file));
  }
  return { unit, integration };
}
