/**
 * The server's protocol eras: one line each, the only file outside the era folders that imports
 * one. `eras.ts` reads this list; removing an era is deleting its folders (`src/mcp/wire/rev…/`,
 * `src/mcp/rev…/`, `src/mcp/requestor/rev…/`) and its line here (and its line in the requestor's
 * registry, `src/mcp/requestor/requestor-era-registry.ts`).
 */
export { rev20251125 } from "./rev2025-11-25/era.js";
export { tasksExt } from "./rev2026-07-28/era.js";
