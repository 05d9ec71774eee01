import { resolve } from "node:path";
import { openSqlite, type SqliteDatabase, type SqliteDriverName } from "./driver.js";

/**
 * The writer lock of a SQLite task file: an exclusive transaction held open on a separate,
 * empty database `<file>-lock` next to it. SQLite takes it as an OS file lock, which the kernel
 * drops when the process ends however it ends (kill -9 included), so a dead holder never blocks
 * the next start; and the task file itself stays readable by anyone (WAL), the web view of
 * another tool or a `sqlite3` shell included. Network file systems whose locks do not work are
 * not protected (nor is SQLite itself on them).
 */
export class SqliteWriterLock {
  private db: SqliteDatabase | null = null;

  constructor(
    readonly file: string,
    private readonly driver?: SqliteDriverName,
  ) {}

  /** The lock's own file. */
  get lockFile(): string {
    return `${resolve(this.file)}-lock`;
  }

  /** Takes the lock; false (nothing held) when another connection, in any process, holds it. */
  acquire(): boolean {
    if (this.db) return true;
    const db = openSqlite(this.lockFile, this.driver);
    try {
      // Never wait: a holder keeps it for its whole life.
      db.pragma("busy_timeout = 0");
      db.exec("BEGIN EXCLUSIVE");
    } catch (error) {
      db.close();
      if ((error as { code?: unknown }).code === "SQLITE_BUSY") return false;
      throw error;
    }
    this.db = db;
    return true;
  }

  release(): void {
    const db = this.db;
    this.db = null;
    if (!db?.open) return;
    if (db.inTransaction) db.exec("ROLLBACK");
    db.close();
  }
}
