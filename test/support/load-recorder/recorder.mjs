// `node --import` this to record what a process loads in $LOADED_LOG: ESM resolutions (hooks.mjs)
// and CommonJS ones (require goes through Module._resolveFilename, which the ESM hook does not see).
import { appendFileSync } from "node:fs";
import Module, { register } from "node:module";
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (...args) {
  const filename = resolveFilename.apply(this, args);
  appendFileSync(process.env.LOADED_LOG, "module file://" + filename + "\n");
  return filename;
};
register("./hooks.mjs", import.meta.url);
