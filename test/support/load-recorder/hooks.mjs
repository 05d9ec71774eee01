// The ESM resolve hook of recorder.mjs: every module URL an import resolves, appended to $LOADED_LOG.
import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(process.env.LOADED_LOG, "module " + resolved.url + "\n");
  return resolved;
}
