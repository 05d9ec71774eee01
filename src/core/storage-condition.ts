/**
 * Conditions of the task store an operator can clear — a full disk, a read-only file, a file
 * another connection holds locked, a database server restarting or out of reach — recognised by
 * the string `code` the drivers put on their errors (better-sqlite3's `SQLITE_*`, PostgreSQL's
 * SQLSTATE, Node's errno names) or, for node-postgres's lost connections, which carry no code, and
 * a server or pooler out of connections, by their words. This is the one place that maps a
 * driver's error to a storage condition. The requestor learns which one it is, in words and in
 * `data.reason`, instead of a bare "Internal error": it names no internals (no path, no SQL), only
 * what to wait for (docs/reliability.md).
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

/** 40P01 deadlock_detected, 40001 serialization_failure: the transaction was rolled back; the same one run again may well succeed at once. */
const TRANSIENT_ROLLBACKS = new Set(["40P01", "40001"]);

/**
 * Whether `error` is PostgreSQL's rollback of a transaction that lost a race with another (a
 * deadlock, a serialization failure): a single-statement transaction can be run again at once.
 */
export function isTransientRollback(error: unknown): boolean {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" && TRANSIENT_ROLLBACKS.has(code);
}

const CONDITIONS: ReadonlyArray<{ match: (code: string) => boolean; condition: StorageCondition }> = [
  {
    // 53100: PostgreSQL's disk_full.
    match: (code) => code.startsWith("SQLITE_FULL") || code === "ENOSPC" || code === "53100",
    condition: {
      reason: "store_full",
      message: "The task store's disk is full: nothing was written; retry once space is freed",
      retryable: false,
    },
  },
  {
    // 25006: PostgreSQL's read_only_sql_transaction (a standby, or default_transaction_read_only).
    match: (code) => code.startsWith("SQLITE_READONLY") || code === "EROFS" || code === "25006",
    condition: {
      reason: "store_read_only",
      message: "The task store is read-only: nothing was written; retry once it is writable again",
      retryable: false,
    },
  },
  {
    match: (code) => code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"),
    condition: {
      reason: "store_busy",
      message: "The task store is locked by another connection: nothing was written; retry shortly",
      retryable: true,
    },
  },
  {
    // PostgreSQL's statement failed and was rolled back whole, for a reason that passes by itself:
    // 55P03 lock_not_available (lock_timeout), 57014 query_canceled (statement_timeout), a
    // deadlock or a serialization failure (TRANSIENT_ROLLBACKS).
    match: (code) => code === "55P03" || code === "57014" || TRANSIENT_ROLLBACKS.has(code),
    condition: { reason: "store_busy", message: "The task store is busy: nothing was written; retry shortly", retryable: true },
  },
];

/**
 * A store that cannot be reached right now: PostgreSQL restarting or going away — 57P01-57P03
 * (admin/crash shutdown, cannot connect now), class 08 (connection exceptions) — or out of what it
 * needs to take this request (class 53, insufficient resources: 53300 too_many_connections, 53200
 * out_of_memory, 53000, 53400; 53100 disk_full is the full disk above), or the network between
 * here and it failing (Node's errno names for a refused, reset, broken or timed-out connection, an
 * unreachable host or network, a DNS lookup that may succeed shortly).
 */
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
  "EAI_AGAIN",
]);

function unreachableCode(code: string): boolean {
  return /^57P0[123]$/.test(code) || /^(08|53)[0-9A-Z]{3}$/.test(code) || UNREACHABLE_CODES.has(code);
}

/**
 * node-postgres reports a connection that dropped, was ended or never came up as a plain Error
 * with no `code` at all, only these words (pg 8: "Connection terminated unexpectedly" for a socket
 * closed under a query, "Connection terminated" for one ended meanwhile, "… due to connection
 * timeout" and pg-pool's "timeout exceeded when trying to connect", and the two refusals of a
 * client whose connection is gone). Matched only on errors that carry no code of their own.
 */
const UNREACHABLE_MESSAGES: readonly RegExp[] = [
  /^Connection terminated( unexpectedly| due to connection timeout)?$/,
  /^timeout exceeded when trying to connect$/,
  /^Client (was closed|has encountered a connection error) and is not queryable$/,
  /^Query read timeout$/,
];

/**
 * A server or a pooler in front of it that takes no more connections, in its own words: PostgreSQL's
 * "sorry, too many clients already" and "remaining connection slots are reserved …", a pooler's
 * "too many connections" or "no more connections allowed (max_client_conn)" — whatever SQLSTATE it
 * puts on them (PgBouncer says 08P01, others XX000 or none). Matched on errors with no code or a
 * SQLSTATE, never on another library's own codes (a handler's MySQL client has ER_CON_COUNT_ERROR).
 */
const NO_MORE_CONNECTIONS: readonly RegExp[] = [
  /sorry, too many clients already/i,
  /too many (client )?connections/i,
  /remaining connection slots are reserved/i,
  /no more connections allowed/i,
];
const SQLSTATE = /^[0-9A-Z]{5}$/;

const UNREACHABLE: StorageCondition = {
  reason: "store_unreachable",
  message: "The task store is unreachable: the request may not have been carried out; retry shortly",
  retryable: true,
};

/**
 * The storage condition `error` reports, if it reports one: by its string `code`, or — a dropped
 * connection of node-postgres, which has none — by its words. The error's `cause` is not followed:
 * a handler's own failed call (`fetch failed`, caused by ECONNREFUSED) is not the store's.
 */
export function storageCondition(error: unknown): StorageCondition | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === "string") {
    const found = CONDITIONS.find((c) => c.match(code))?.condition ?? (unreachableCode(code) ? UNREACHABLE : undefined);
    if (found !== undefined) return found;
  }
  if (typeof message !== "string") return undefined;
  if (code === undefined && UNREACHABLE_MESSAGES.some((m) => m.test(message))) return UNREACHABLE;
  if ((code === undefined || (typeof code === "string" && SQLSTATE.test(code))) && NO_MORE_CONNECTIONS.some((m) => m.test(message)))
    return UNREACHABLE;
  return undefined;
}
