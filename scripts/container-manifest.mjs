// Run by the Dockerfile's build stage before `npm prune --omit=dev`: the image's node_modules is
// the lock file's production tree plus the required peers (the MCP SDK, zod, the OpenTelemetry
// API) that a user's npm installs beside the package. In this checkout they are devDependencies
// too, so a plain prune would drop them; here they become dependencies at the exact versions
// the lock file holds, and the prune keeps them and nothing else. Only the image's copy of
// package.json is changed.
import { readFileSync, writeFileSync } from "node:fs";

const manifest = JSON.parse(readFileSync("package.json", "utf8"));
const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));

// Optional peers a server image carries all the same: the native SQLite driver is faster than
// node:sqlite (docs/packaging.md), and a server on /data is what the image is for.
const IN_IMAGE = new Set(["better-sqlite3"]);

for (const name of Object.keys(manifest.peerDependencies ?? {})) {
  if (manifest.peerDependenciesMeta?.[name]?.optional && !IN_IMAGE.has(name)) continue;
  const locked = lock.packages[`node_modules/${name}`];
  if (!locked) throw new Error(`${name}: a required peer the lock file does not hold`);
  manifest.dependencies[name] = locked.version;
  delete manifest.devDependencies[name];
}
writeFileSync("package.json", `${JSON.stringify(manifest, null, 2)}\n`);
