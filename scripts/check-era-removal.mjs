#!/usr/bin/env node
// Removes a protocol era from a copy of src/ and typechecks what is left: the era's two folders
// (src/mcp/rev<era>/, src/client/rev<era>/) and its one line in each registry
// (src/mcp/era-registry.ts, src/client/requestor-era-registry.ts) are deleted, nothing else is
// edited, and `tsc --noEmit` must pass. So the seam cannot quietly grow a dependency on one era.
//
//   node scripts/check-era-removal.mjs                 # 2026-07-28 (npm run check:eras)
//   node scripts/check-era-removal.mjs 2025-11-25      # any registered era
//
// Only src/ is checked: the tests name both eras on purpose. The copy lives under .tmp/ so that
// the repository's node_modules resolves from it as from src/.
import { spawnSync } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const REGISTRIES = ["src/mcp/era-registry.ts", "src/client/requestor-era-registry.ts"];
const eras = process.argv.slice(2);

let failed = false;
for (const era of eras.length > 0 ? eras : ["2026-07-28"]) {
  if (!(await removes(era))) failed = true;
}
process.exit(failed ? 1 : 0);

/** Removes `era` from a copy of src/ and typechecks it; true when it compiles. */
async function removes(era) {
  const folders = [`src/mcp/rev${era}`, `src/client/rev${era}`];
  for (const folder of folders) {
    if (!existsSync(join(ROOT, folder))) throw new Error(`${folder} does not exist: is ${era} a registered era?`);
  }
  await mkdir(join(ROOT, ".tmp"), { recursive: true });
  const copy = await mkdtemp(join(ROOT, ".tmp", `era-removal-${era}-`));
  try {
    await cp(join(ROOT, "src"), join(copy, "src"), { recursive: true });
    for (const folder of folders) await rm(join(copy, folder), { recursive: true });
    for (const registry of REGISTRIES) {
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
    if (run.status === 0) {
      console.log(`== without ${era}: src/ typechecks (deleted ${folders.join(", ")} and one line of ${REGISTRIES.join(" and ")})`);
      return true;
    }
    console.log(`== without ${era}: src/ does not typecheck\n${output.replaceAll(copy + "/", "")}`);
    return false;
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
}
