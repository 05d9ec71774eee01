// `prepack` / `postpack`: the packed package.json carries no `prepare` script. In this checkout
// `prepare` unlinks the bundled Node 22 after `npm install` (scripts/unlink-bundled-node.mjs), a
// file the package does not ship; left in the tarball's manifest, npm would list it as an install
// script to approve on every install of the tarball. `strip` keeps a copy of package.json and
// removes the script; `restore` puts the copy back once the tarball is written.
import { copyFileSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";

const MANIFEST = "package.json";
const BACKUP = ".package.json.before-pack";

const [, , step] = process.argv;
if (step === "strip") {
  // A backup left by a pack that died before `postpack` is the real manifest: put it back first.
  if (existsSync(BACKUP)) renameSync(BACKUP, MANIFEST);
  copyFileSync(MANIFEST, BACKUP);
  const manifest = JSON.parse(readFileSync(MANIFEST, "utf8"));
  delete manifest.scripts.prepare;
  writeFileSync(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
} else if (step === "restore") {
  if (existsSync(BACKUP)) renameSync(BACKUP, MANIFEST);
} else {
  process.stderr.write("usage: node scripts/pack-manifest.mjs strip|restore\n");
  process.exit(2);
}
