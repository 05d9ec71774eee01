/**
 * Which lane a test file runs in (vitest.config.ts's projects), decided from what the file needs,
 * so a new file is classified without being listed anywhere:
 * - `integration`: the file, or any module under test/ it imports (followed through relative
 *   imports), names a child process or an external service — {@link NEEDS_OUTSIDE} below:
 *   node:child_process, process.execPath, the SDK's stdio transport, PostgreSQL (`pg`, the
 *   postgres fixtures, a postgres:// URL), Chromium (playwright), tmux, nginx, Redis;
 * - `unit`: everything else — in-process servers, SQLite files, real HTTP on 127.0.0.1.
 * `npm test` runs both; `npm run test:unit` the first alone.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const NEEDS_OUTSIDE = [
  /\bchild_process\b/,
  /\bprocess\.execPath\b/,
  /\bStdioClientTransport\b/,
  /from "pg"/,
  /support\/(private-)?postgres\.js"/,
  /postgres:\/\//,
  /\bplaywright/,
  /\btmux\b/,
  /\bnginx\b/,
  /\bredis\b/i,
];

const RELATIVE_IMPORT = /(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

/** The file on disk a relative import names (`.js` in the source is the `.ts` beside it). */
function resolved(from: string, specifier: string): string {
  const target = resolve(dirname(from), specifier);
  return target.endsWith(".js") ? `${target.slice(0, -3)}.ts` : target;
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
    return false; // not a file of ours (a .mjs kept as is, a directory index): read as harmless
  }
  let result = NEEDS_OUTSIDE.some((marker) => marker.test(text));
  for (const [, specifier] of text.matchAll(RELATIVE_IMPORT)) {
    if (result) break;
    const target = specifier === undefined ? null : resolved(file, specifier);
    if (target && !relative(testRoot, target).startsWith("..")) result = needsOutside(target, testRoot, seen);
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
