/**
 * Conditions of the task store an operator can clear — a full disk, a read-only file, a file
 * another connection holds locked, a database server restarting — recognised by the string `code` the drivers put on their
 * errors (better-sqlite3's `SQLITE_*`, PostgreSQL's SQLSTATE, Node's errno names). The requestor
 * learns which one it is, in words and in `data.reason`, instead of a bare "Internal error": it
 * names no internals (no path, no SQL), only what to wait for (docs/reliability.md).
 */
export type StorageReason = "store_full" | "store_read_only" | "store_busy" | "store_unreachable";

export interface StorageCondition {
  reason: StorageReason;
  message: string;
  /** The same request may succeed when sent again shortly (a lock is released by itself). */
  retryable: boolean;
}

/** How long a requestor refused for a busy store should wait before trying again, ms. */
export const BUSY_RETRY_AFTER_MS = 1000;

const CONDITIONS: ReadonlyArray<{ match: (code: string) => boolean; condition: StorageCondition }> = [
  {
    // 53100: PostgreSQL's disk_full.
    match: (code) => code.startsWith("SQLITE_FULL") || code === "ENOSPC" || code === "53100",
    condition: { reason: "store_full", message: "The task store's disk is full: nothing was written; retry once space is freed", retryable: false },
  },
  {
    // 25006: PostgreSQL's read_only_sql_transaction (a standby, or default_transaction_read_only).
    match: (code) => code.startsWith("SQLITE_READONLY") || code === "EROFS" || code === "25006",
    condition: { reason: "store_read_only", message: "The task store is read-only: nothing was written; retry once it is writable again", retryable: false },
  },
  {
    match: (code) => code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"),
    condition: { reason: "store_busy", message: "The task store is locked by another connection: nothing was written; retry shortly", retryable: true },
  },
  {
    // A PostgreSQL server restarting: 57P01-57P03 (admin/crash shutdown, cannot connect now),
    // class 08 (connection exceptions), or no server listening at all.
    match: (code) => /^57P0[123]$/.test(code) || /^08\d{3}$/.test(code) || code === "ECONNREFUSED" || code === "ECONNRESET",
    condition: { reason: "store_unreachable", message: "The task store is unreachable: the request may not have been carried out; retry shortly", retryable: true },
  },
];

/** The storage condition `error` reports, if it reports one. */
export function storageCondition(error: unknown): StorageCondition | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== "string") return undefined;
  return CONDITIONS.find((c) => c.match(code))?.condition;
}
