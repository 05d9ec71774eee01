/** `mcp-tasks/sqlite` — tasks in one SQLite file (better-sqlite3, a native addon: loaded only by this entry). */
export { sqliteStore, type SqliteStoreOptions } from "../store/sqlite/sqlite-store.js";
export { StoreInUseError, type WriterLockHolder, type WriterLockStore } from "../store/writer-lock.js";
