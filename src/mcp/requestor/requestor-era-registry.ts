/**
 * The requestor's protocol eras: one line each, the only file outside the era folders that imports
 * one. Each line brings the era's descriptor (read by `requestor-eras.ts`). Removing an era is
 * deleting its folders (`src/mcp/wire/rev…/`, `src/mcp/rev…/`, `src/mcp/requestor/rev…/`), its line
 * here and its line in `src/mcp/era-registry.ts`.
 */
export * from "./rev2025-11-25/era.js";
export * from "./rev2026-07-28/era.js";
