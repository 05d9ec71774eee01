/** Store-wide values kept with the data, such as the cursor MAC secret. */
import { statement, type Statement, type Tables } from "./sql.js";

export const SECRET_KEY = "cursor_secret";

export interface MetaStatements {
  /** ($1 key) */
  read: Statement;
  /** ($1 key, $2 value): insert-if-absent, so whichever node writes first, all read the same bytes. */
  insert: Statement;
}

export function metaStatements(t: Tables): MetaStatements {
  return {
    read: statement("meta_read", `SELECT value FROM ${t.meta} WHERE key = $1`),
    insert: statement("meta_insert", `INSERT INTO ${t.meta} (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`),
  };
}
