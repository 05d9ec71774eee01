/**
 * Paused tools in PostgreSQL (tool-pause-store.ts): their table, appended to the schema's
 * migrations, and the store's operations on it. The cluster's claim (lease-statements.ts) reads
 * the table in the statement that leases, so every node honours a pause from the moment it is
 * written, whichever node wrote it.
 */
import type pg from "pg";
import type { ToolPause, ToolPauseStore } from "../tool-pause-store.js";
import { statement, type Statement, type Tables } from "./sql.js";

/** The table of paused tools, in the store's schema. */
export function toolPausesTable(t: Tables): string {
  return `${t.schema}.tool_pauses`;
}

export const TOOL_PAUSES_MIGRATION = (t: Tables): string => `
  CREATE TABLE ${toolPausesTable(t)} (
    name      TEXT COLLATE "C" PRIMARY KEY,
    paused_at BIGINT NOT NULL,
    paused_by TEXT NOT NULL
  );
  `;

export function postgresToolPauses(
  tables: Tables,
  rows: <R extends pg.QueryResultRow>(query: Statement, values: unknown[]) => Promise<R[]>,
): ToolPauseStore {
  const table = toolPausesTable(tables);
  const insert = statement(
    "tool_pause",
    `INSERT INTO ${table} (name, paused_at, paused_by) VALUES ($1, $2::bigint, $3) ON CONFLICT (name) DO NOTHING RETURNING name`,
  );
  const remove = statement("tool_resume", `DELETE FROM ${table} WHERE name = $1 RETURNING name`);
  const all = statement("tool_pauses", `SELECT name, paused_at, paused_by FROM ${table} ORDER BY name`);
  return {
    async pauseTool(pause: ToolPause) {
      return (await rows(insert, [pause.name, pause.pausedAt, pause.pausedBy])).length === 1;
    },
    async resumeTool(name: string) {
      return (await rows(remove, [name])).length === 1;
    },
    async pausedTools() {
      const found = await rows<{ name: string; paused_at: string | number; paused_by: string }>(all, []);
      return found.map((row) => ({ name: row.name, pausedAt: Number(row.paused_at), pausedBy: row.paused_by }));
    },
  };
}
