// `prepack`, after the build: removes from dist/ the declaration files no public entry's types
// reach. The package's `exports` map admits only its entries (dist/exports/*.js), so a
// declaration that none of their declarations imports, directly or through others, can never be
// read by a user's TypeScript: the CLI's and the gateway's internals, most of the engine's. They
// are most of the files and 1.1 MB of every install on disk (docs/packaging.md). The JavaScript is
// all kept: the CLI runs it.
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";

const DIST = "dist";
const ENTRIES = join(DIST, "exports");

/** Relative module specifiers a declaration file names (`from "./x.js"`, `import("./x.js")`, `import "./x.js"`). */
const SPECIFIER = /(?:\bfrom|\bimport)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g;

function declarationOf(from, specifier) {
  const target = join(dirname(from), specifier);
  for (const candidate of [target.replace(/\.js$/, ".d.ts"), `${target}.d.ts`, join(target, "index.d.ts")]) {
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

function declarations(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return declarations(path);
    return entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

const reached = new Set();
const unresolved = [];
const queue = readdirSync(ENTRIES)
  .filter((name) => name.endsWith(".d.ts"))
  .map((name) => join(ENTRIES, name));
while (queue.length > 0) {
  const file = queue.pop();
  if (reached.has(file)) continue;
  reached.add(file);
  for (const [, specifier] of readFileSync(file, "utf8").matchAll(SPECIFIER)) {
    const target = declarationOf(file, specifier);
    if (target === null) unresolved.push(`${file}: ${specifier}`);
    else queue.push(target);
  }
}
if (unresolved.length > 0) {
  process.stderr.write(`prune-declarations: imports that name no declaration file:\n${unresolved.join("\n")}\n`);
  process.exit(1);
}
const removed = declarations(DIST).filter((file) => !reached.has(file));
for (const file of removed) rmSync(file);
process.stdout.write(`prune-declarations: kept ${reached.size} declaration files, removed ${removed.length} no entry reaches\n`);
