/** Store-wide values kept with the data, such as the cursor MAC secret. */
import { randomBytes } from "node:crypto";
import type { SqliteDatabase as Database } from "./driver.js";
import type { WriterLockHolder } from "../writer-lock.js";

const SECRET_KEY = "cursor_secret";
/** Who holds the file's writer lock (see SqliteWriterLock), for the message of the server refused. */
const WRITER_KEY = "writer";

export interface MetaStatements {
  /** The store's secret, created on first use; every process sharing the file gets the same one. */
  secret: () => Buffer;
  /** Records the server that holds the writer lock now. */
  recordWriter: (holder: WriterLockHolder) => void;
  /** The server that last recorded itself as the lock's holder, if any (a holder's record is never stale). */
  writer: () => WriterLockHolder | null;
}

export function prepareMetaStatements(db: Database): MetaStatements {
  const insert = db.prepare<[string, Buffer], unknown>(`INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)`);
  // A BLOB reads as a Buffer from better-sqlite3 and as a plain Uint8Array from node:sqlite.
  const read = db.prepare<[string], { value: Uint8Array }>(`SELECT value FROM meta WHERE key = ?`);
  const put = db.prepare<[string, Buffer], unknown>(`INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)`);

  return {
    secret: () => {
      const existing = read.get(SECRET_KEY);
      if (existing !== undefined) return Buffer.from(existing.value);
      // Insert-if-absent, then read back: whichever process wrote first, all read the same bytes.
      insert.run(SECRET_KEY, randomBytes(32));
      const row = read.get(SECRET_KEY);
      if (row === undefined) throw new Error("task store secret is missing after insert");
      return Buffer.from(row.value);
    },
    recordWriter: (holder) => {
      put.run(WRITER_KEY, Buffer.from(JSON.stringify(holder)));
    },
    writer: () => {
      const row = read.get(WRITER_KEY);
      if (row === undefined) return null;
      try {
        const value = JSON.parse(Buffer.from(row.value).toString("utf8")) as Partial<WriterLockHolder>;
        if (typeof value.pid === "number" && typeof value.host === "string" && typeof value.since === "number") {
          return { pid: value.pid, host: value.host, since: value.since };
        }
      } catch {
        // An unreadable record only loses the detail; the refusal stands.
      }
      return null;
    },
  };
}
