/**
 * `mcp-tasks/sqlite` — tasks in one SQLite file, through better-sqlite3 when the application has
 * installed it (a native addon, loaded only by this entry), else Node's built-in `node:sqlite`.
 */
export { sqliteStore, type SqliteStoreOptions } from "../store/sqlite/sqlite-store.js";
export type { SqliteDriverName } from "../store/sqlite/driver.js";
export { StoreInUseError, type WriterLockHolder, type WriterLockStore } from "../store/writer-lock.js";
