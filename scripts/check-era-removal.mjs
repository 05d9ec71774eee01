#!/usr/bin/env node
// Removes a protocol era from a copy of src/ and typechecks what is left. An era is three folders —
// its wire (src/mcp/wire/rev<era>/), its server binding (src/mcp/rev<era>/) and its requestor
// (src/mcp/requestor/rev<era>/) — and one line in each registry (src/mcp/era-registry.ts for the
// server, src/mcp/requestor/requestor-era-registry.ts for the requestor). Three removals are
// checked, each on a fresh copy, nothing else edited, and `tsc --noEmit` must pass for each:
//   server     the binding and its registry line: the requestor of that era still builds on its wire;
//   requestor  the requestor and its registry line: the server still serves the era;
//   era        all three folders and both lines: the whole era is gone.
// So the seam cannot quietly grow a dependency on one era, on either side.
//
//   node scripts/check-era-removal.mjs                 # 2026-07-28 (npm run check:eras)
//   node scripts/check-era-removal.mjs 2025-11-25      # any registered era
//
// Only src/ is checked: the tests name both eras on purpose. The copies live under .tmp/ so that
// the repository's node_modules resolves from them as from src/.
import { spawnSync } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const SERVER_REGISTRY = "src/mcp/era-registry.ts";
const REQUESTOR_REGISTRY = "src/mcp/requestor/requestor-era-registry.ts";
const eras = process.argv.slice(2);

/** What each check deletes of era `era`: folders, and the registries that lose the era's line. */
function removals(era) {
  const wire = `src/mcp/wire/rev${era}`;
  const binding = `src/mcp/rev${era}`;
  const requestor = `src/mcp/requestor/rev${era}`;
  return [
    { side: "server", folders: [binding], registries: [SERVER_REGISTRY] },
    { side: "requestor", folders: [requestor], registries: [REQUESTOR_REGISTRY] },
    { side: "era", folders: [wire, binding, requestor], registries: [SERVER_REGISTRY, REQUESTOR_REGISTRY] },
  ];
}

let failed = false;
for (const era of eras.length > 0 ? eras : ["2026-07-28"]) {
  for (const removal of removals(era)) {
    if (!(await removes(era, removal))) failed = true;
  }
}
process.exit(failed ? 1 : 0);

/** Deletes `folders` and the era's line of each of `registries` from a copy of src/ and typechecks it; true when it compiles. */
async function removes(era, { side, folders, registries }) {
  for (const folder of folders) {
    if (!existsSync(join(ROOT, folder))) throw new Error(`${folder} does not exist: is ${era} a registered era?`);
  }
  await mkdir(join(ROOT, ".tmp"), { recursive: true });
  const copy = await mkdtemp(join(ROOT, ".tmp", `era-removal-${era}-${side}-`));
  try {
    await cp(join(ROOT, "src"), join(copy, "src"), { recursive: true });
    for (const folder of folders) await rm(join(copy, folder), { recursive: true });
    for (const registry of registries) {
      const path = join(copy, registry);
      const lines = (await readFile(path, "utf8")).split("\n");
      const named = lines.filter((line) => line.includes(`/rev${era}/`));
      // One line per era and registry is the deletion story: more would mean more to edit.
      if (named.length !== 1) throw new Error(`${registry} names ${era} on ${named.length} lines, not one`);
      await writeFile(path, lines.filter((line) => !line.includes(`/rev${era}/`)).join("\n"));
    }
    const config = JSON.parse(await readFile(join(ROOT, "tsconfig.json"), "utf8"));
    await writeFile(join(copy, "tsconfig.json"), JSON.stringify({ ...config, include: ["src"] }, null, 2));
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const run = spawnSync(process.execPath, [tsc, "-p", join(copy, "tsconfig.json"), "--noEmit"], { cwd: copy, encoding: "utf8" });
    const output = `${run.stdout}${run.stderr}`.trim();
    const what = `${folders.join(", ")} and one line of ${registries.join(" and ")}`;
    if (run.status === 0) {
      console.log(`== without ${era} (${side}): src/ typechecks (deleted ${what})`);
      return true;
    }
    console.log(`== without ${era} (${side}): src/ does not typecheck (deleted ${what})\n${output.replaceAll(copy + "/", "")}`);
    return false;
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
}
