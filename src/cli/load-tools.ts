import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { TaskServer } from "../mcp/task-server.js";

/**
 * Loads user tools from a module whose default export (or `register` export) is
 * `(app: TaskServer) => void | Promise<void>`.
 */
export async function loadToolsModule(app: TaskServer, modulePath: string): Promise<void> {
  const mod = (await import(pathToFileURL(resolve(modulePath)).href)) as { default?: unknown; register?: unknown };
  const register = typeof mod.default === "function" ? mod.default : mod.register;
  if (typeof register !== "function") {
    throw new Error(`${modulePath} must export a default function (app) => void that registers tools`);
  }
  await (register as (app: TaskServer) => unknown)(app);
}
