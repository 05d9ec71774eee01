/** Every requirement id the sources and tests cite is defined in docs/spec/, once. */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";

const REPO_ROOT = join(import.meta.dirname, "..", "..");
const ID = /\b[TX]-[A-Z]+-[0-9]+\b/g;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return filesUnder(path);
    return /\.(ts|mts|js|mjs)$/.test(entry.name) ? [path] : [];
  });
}

/** The ids the requirement lists define: one bold id at the start of a list item. */
function definedIds(): string[] {
  const dir = join(REPO_ROOT, "docs", "spec");
  return readdirSync(dir)
    .filter((name) => /^\d{4}-\d{2}-\d{2}\.md$/.test(name))
    .flatMap((name) => [...readFileSync(join(dir, name), "utf8").matchAll(/^- \*\*([TX]-[A-Z]+-[0-9]+)\*\*/gm)].map((m) => m[1] as string));
}

it("defines every requirement id cited in src/ and test/", () => {
  const defined = new Set(definedIds());
  const cited = new Set(
    filesUnder(join(REPO_ROOT, "src"))
      .concat(filesUnder(join(REPO_ROOT, "test")))
      .flatMap((file) => readFileSync(file, "utf8").match(ID) ?? []),
  );
  expect([...cited].filter((id) => !defined.has(id)).sort()).toEqual([]);
});

it("defines each requirement id once", () => {
  const ids = definedIds();
  expect(ids.length).toBeGreaterThan(200);
  expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
});
