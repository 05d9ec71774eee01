/** Store-wide values kept with the data, such as the cursor MAC secret. */
import { randomBytes } from "node:crypto";
import type { Database } from "better-sqlite3";

const SECRET_KEY = "cursor_secret";

export interface MetaStatements {
  /** The store's secret, created on first use; every process sharing the file gets the same one. */
  secret: () => Buffer;
}

export function prepareMetaStatements(db: Database): MetaStatements {
  const insert = db.prepare<[string, Buffer], unknown>(`INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)`);
  const read = db.prepare<[string], { value: Buffer }>(`SELECT value FROM meta WHERE key = ?`);

  return {
    secret: () => {
      const existing = read.get(SECRET_KEY);
      if (existing !== undefined) return existing.value;
      // Insert-if-absent, then read back: whichever process wrote first, all read the same bytes.
      insert.run(SECRET_KEY, randomBytes(32));
      const row = read.get(SECRET_KEY);
      if (row === undefined) throw new Error("task store secret is missing after insert");
      return row.value;
    },
  };
}
