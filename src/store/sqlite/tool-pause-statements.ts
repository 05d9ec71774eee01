/**
 * Paused tools in SQLite (tool-pause-store.ts): their table, appended to the schema's migrations,
 * and the store's operations on it. The claim statements (queue-statements.ts) leave queued tasks
 * of the tools in it where they are.
 */
import type { SqliteDatabase as Database } from "./driver.js";
import type { ToolPause, ToolPauseStore } from "../tool-pause-store.js";

export const TOOL_PAUSES_MIGRATION = `
  CREATE TABLE tool_pauses (
    name      TEXT PRIMARY KEY,
    paused_at INTEGER NOT NULL,
    paused_by TEXT NOT NULL
  ) WITHOUT ROWID;
  `;

/** What a claim adds to its queued rows' test: no task of a paused tool (`alias` names the tasks table). */
export function notPausedSql(alias: string): string {
  return `${alias}name NOT IN (SELECT name FROM tool_pauses)`;
}

/** The store's operations on paused tools; `flush` commits the writes grouped so far first. */
export function sqliteToolPauses(db: Database, flush: () => void): ToolPauseStore {
  const insert = db.prepare<[ToolPause], unknown>(
    `INSERT INTO tool_pauses (name, paused_at, paused_by) VALUES (@name, @pausedAt, @pausedBy) ON CONFLICT (name) DO NOTHING`,
  );
  const remove = db.prepare<[string], unknown>(`DELETE FROM tool_pauses WHERE name = ?`);
  const all = db.prepare<[], { name: string; paused_at: number; paused_by: string }>(
    `SELECT name, paused_at, paused_by FROM tool_pauses ORDER BY name`,
  );
  return {
    async pauseTool(pause) {
      flush();
      return insert.run({ name: pause.name, pausedAt: pause.pausedAt, pausedBy: pause.pausedBy }).changes === 1;
    },
    async resumeTool(name) {
      flush();
      return remove.run(name).changes === 1;
    },
    async pausedTools() {
      flush();
      return all.all().map((row) => ({ name: row.name, pausedAt: row.paused_at, pausedBy: row.paused_by }));
    },
  };
}
