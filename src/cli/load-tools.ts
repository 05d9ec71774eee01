import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import { dirname, extname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { TaskServer } from "../mcp/task-server.js";

const TYPESCRIPT_EXTENSIONS = new Set([".ts", ".mts", ".cts", ".tsx"]);

/** The part of tsx's ESM API used here (`tsx/esm/api`). */
interface TsxEsmApi {
  register(): unknown;
}

/**
 * Loads user tools from a module whose default export (or `register` export) is
 * `(app: TaskServer) => void | Promise<void>`. A TypeScript module is compiled by tsx, which is
 * not a dependency of this package: the user's project (the module's or the working directory's)
 * provides it.
 */
export async function loadToolsModule(app: TaskServer, modulePath: string): Promise<void> {
  const file = resolve(modulePath);
  const url = pathToFileURL(file).href;
  let mod: { default?: unknown; register?: unknown };
  if (TYPESCRIPT_EXTENSIONS.has(extname(file))) {
    // Registered for the whole process, not a scoped tsImport: the module and what it imports must
    // share this process's module instances (its `mcp-tasks`, its errors' classes).
    (await findTsx([file, join(process.cwd(), "package.json")]))?.register();
    mod = (await importTypeScript(url, modulePath)) as typeof mod;
  } else {
    mod = (await import(url)) as typeof mod;
  }
  const register = typeof mod.default === "function" ? mod.default : mod.register;
  if (typeof register !== "function") {
    throw new Error(`${modulePath} must export a default function (app) => void that registers tools`);
  }
  await (register as (app: TaskServer) => unknown)(app);
}

/**
 * tsx's ESM API as installed beside the first of `from` that has it, or null. Found through tsx's
 * own package.json exports (its `import` entry: the CommonJS build of `tsx/esm/api` cannot
 * register the ESM hooks), since this package does not depend on tsx.
 */
async function findTsx(from: string[]): Promise<TsxEsmApi | null> {
  for (const place of from) {
    let manifest: string;
    try {
      manifest = createRequire(place).resolve("tsx/package.json");
    } catch {
      continue; // not installed there
    }
    const exports = (JSON.parse(readFileSync(manifest, "utf8")) as { exports?: Record<string, unknown> }).exports;
    const entry = (exports?.["./esm/api"] as { import?: { default?: unknown } } | undefined)?.import?.default;
    if (typeof entry !== "string") continue;
    const api = (await import(pathToFileURL(join(dirname(manifest), entry)).href)) as Partial<TsxEsmApi>;
    if (typeof api.register === "function") return api as TsxEsmApi;
  }
  return null;
}

/** With tsx registered, or whatever this Node does with TypeScript (a loader given with --import, or none). */
async function importTypeScript(url: string, modulePath: string): Promise<unknown> {
  try {
    return await import(url);
  } catch (error) {
    if ((error as { code?: unknown }).code !== "ERR_UNKNOWN_FILE_EXTENSION") throw error;
    throw new Error(
      `${modulePath} is TypeScript, and loading it needs tsx: install it in your project (npm install --save-dev tsx), or compile ${modulePath} to JavaScript and pass the .js file`,
      { cause: error },
    );
  }
}
