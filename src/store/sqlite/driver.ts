import { createRequire } from "node:module";

/**
 * The part of a SQLite driver the store uses, in better-sqlite3's shape: a better-sqlite3
 * `Database` is one as it is, and Node's built-in `node:sqlite` becomes one through
 * {@link nodeSqliteDatabase}. The store's statement files are written against this, so neither
 * driver is imported by them.
 */
export interface SqliteDatabase {
  prepare<P extends unknown[] | object = unknown[], R = unknown>(sql: string): P extends unknown[] ? Statement<P, R> : Statement<[P], R>;
  exec(sql: string): unknown;
  pragma(sql: string, options?: { simple?: boolean }): unknown;
  transaction<A extends unknown[], T>(fn: (...args: A) => T): Transaction<A, T>;
  readonly open: boolean;
  readonly inTransaction: boolean;
  close(): unknown;
}

export interface Statement<P extends unknown[], R> {
  get(...params: P): R | undefined;
  all(...params: P): R[];
  run(...params: P): { changes: number; lastInsertRowid: number | bigint };
}

/** A function run in a transaction (BEGIN … COMMIT, or a savepoint inside one); `.immediate` takes the write lock first. */
export interface Transaction<A extends unknown[], T> {
  (...args: A): T;
  immediate(...args: A): T;
}

/** Which driver opens SQLite files. */
export type SqliteDriverName = "node:sqlite" | "better-sqlite3";

const require = createRequire(import.meta.url);

/**
 * The driver used when none is asked for: better-sqlite3 when it is installed (an optional peer
 * dependency: it served creation and `tasks/get` with about half the server CPU of node:sqlite in
 * the shipped-process bench on Node 22 and 24, docs/packaging.md), else
 * Node's own `node:sqlite` where this Node has it (22.16 and later), which needs no native addon,
 * so a library install or `npx mcp-tasks serve` keeps tasks in SQLite as installed.
 * `MCP_TASKS_SQLITE_DRIVER` names one explicitly.
 */
export function defaultSqliteDriver(): SqliteDriverName {
  const named = process.env["MCP_TASKS_SQLITE_DRIVER"];
  if (named === "node:sqlite" || named === "better-sqlite3") return named;
  if (named !== undefined && named !== "") {
    throw new Error(`MCP_TASKS_SQLITE_DRIVER must be "node:sqlite" or "better-sqlite3", not ${JSON.stringify(named)}`);
  }
  return betterSqlite3Installed() || nodeSqlite() === null ? "better-sqlite3" : "node:sqlite";
}

function betterSqlite3Installed(): boolean {
  try {
    require.resolve("better-sqlite3");
    return true;
  } catch {
    return false;
  }
}

/** Opens `path` with `driver`. */
export function openSqlite(path: string, driver: SqliteDriverName = defaultSqliteDriver()): SqliteDatabase {
  if (driver === "better-sqlite3") return new (betterSqlite3())(path) as unknown as SqliteDatabase;
  const sqlite = nodeSqlite();
  if (sqlite === null) {
    throw new Error(`node:sqlite is not available on Node ${process.versions.node} (22.16 or later has it): npm install better-sqlite3`);
  }
  return nodeSqliteDatabase(sqlite, path);
}

type BetterSqlite3 = new (path: string) => unknown;

function betterSqlite3(): BetterSqlite3 {
  try {
    return require("better-sqlite3") as BetterSqlite3;
  } catch (error) {
    if ((error as { code?: unknown }).code !== "MODULE_NOT_FOUND") throw error;
    throw new Error(
      `A SQLite task store on Node ${process.versions.node} needs better-sqlite3 (Node 22.16 and later can use the built-in node:sqlite): npm install better-sqlite3`,
      { cause: error },
    );
  }
}

// ---- node:sqlite ----

interface NodeStatement {
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): { changes: number; lastInsertRowid: number | bigint };
  setAllowUnknownNamedParameters?(allow: boolean): void;
}
interface NodeDatabase {
  prepare(sql: string): NodeStatement;
  exec(sql: string): void;
  close(): void;
  readonly isTransaction: boolean;
}
interface NodeSqliteModule {
  DatabaseSync: new (path: string) => NodeDatabase;
}

let loaded: NodeSqliteModule | null | undefined;

/**
 * `node:sqlite`, or null where this Node has none fit for the store (one whose connections say
 * whether a transaction is open, which the group commit needs to roll back cleanly). Node 22 and 24 announce it
 * as experimental with a process warning on first load; the store depends only on what both
 * lines ship, so that one warning is kept off the application's stderr.
 */
function nodeSqlite(): NodeSqliteModule | null {
  if (loaded !== undefined) return loaded;
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
    const text = typeof warning === "string" ? warning : warning.message;
    if (/SQLite is an experimental feature/.test(text)) return;
    return (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    const module = require("node:sqlite") as NodeSqliteModule;
    const probe = new module.DatabaseSync(":memory:");
    loaded = typeof probe.isTransaction === "boolean" ? module : null;
    probe.close();
  } catch {
    loaded = null;
  } finally {
    process.emitWarning = emitWarning;
  }
  return loaded;
}

/**
 * SQLite's primary result codes by number, for errors of node:sqlite, which carry the number
 * (`errcode`) and `ERR_SQLITE_ERROR` as their code: the store and its storage conditions read
 * better-sqlite3's names (`SQLITE_BUSY`, …), so the name goes on the error as its code.
 */
const PRIMARY_CODES: Record<number, string> = {
  1: "SQLITE_ERROR",
  2: "SQLITE_INTERNAL",
  3: "SQLITE_PERM",
  4: "SQLITE_ABORT",
  5: "SQLITE_BUSY",
  6: "SQLITE_LOCKED",
  7: "SQLITE_NOMEM",
  8: "SQLITE_READONLY",
  9: "SQLITE_INTERRUPT",
  10: "SQLITE_IOERR",
  11: "SQLITE_CORRUPT",
  13: "SQLITE_FULL",
  14: "SQLITE_CANTOPEN",
  15: "SQLITE_PROTOCOL",
  17: "SQLITE_SCHEMA",
  18: "SQLITE_TOOBIG",
  19: "SQLITE_CONSTRAINT",
  20: "SQLITE_MISMATCH",
  21: "SQLITE_MISUSE",
  23: "SQLITE_AUTH",
  25: "SQLITE_RANGE",
  26: "SQLITE_NOTADB",
};

function renamed(error: unknown): unknown {
  const e = error as { code?: unknown; errcode?: unknown };
  if (e !== null && typeof e === "object" && e.code === "ERR_SQLITE_ERROR" && typeof e.errcode === "number") {
    const name = PRIMARY_CODES[e.errcode & 0xff];
    if (name !== undefined) e.code = name;
  }
  return error;
}

/**
 * node:sqlite binds a string only up to its first U+0000, where better-sqlite3 keeps it whole: a
 * status message or result text with one would lose the rest. It is stored with U+FFFD in its
 * place, as the PostgreSQL store does (PostgreSQL text cannot hold it either); a string without one
 * is passed as it is, and so are the parameters that hold none (the common case: nothing copied).
 */
function withoutNul(value: unknown): unknown {
  return typeof value === "string" && value.includes("\u0000") ? value.replaceAll("\u0000", "\uFFFD") : value;
}
function bindable(params: unknown[]): unknown[] {
  let out = params;
  for (let i = 0; i < params.length; i++) {
    const param = params[i];
    let fixed = param;
    if (typeof param === "string") fixed = withoutNul(param);
    else if (param !== null && typeof param === "object" && !(param instanceof Uint8Array)) {
      const entries = Object.entries(param);
      if (entries.some(([, value]) => typeof value === "string" && value.includes("\u0000"))) {
        fixed = Object.fromEntries(entries.map(([key, value]) => [key, withoutNul(value)]));
      }
    }
    if (fixed !== param) {
      if (out === params) out = [...params];
      out[i] = fixed;
    }
  }
  return out;
}

function statement(inner: NodeStatement): Statement<unknown[], unknown> {
  // better-sqlite3 ignores named values a statement does not use; so does the store.
  inner.setAllowUnknownNamedParameters?.(true);
  return {
    get: (...params) => {
      try {
        return inner.get(...bindable(params));
      } catch (error) {
        throw renamed(error);
      }
    },
    all: (...params) => {
      try {
        return inner.all(...bindable(params));
      } catch (error) {
        throw renamed(error);
      }
    },
    run: (...params) => {
      try {
        return inner.run(...bindable(params));
      } catch (error) {
        throw renamed(error);
      }
    },
  };
}

/** A node:sqlite connection in the shape of {@link SqliteDatabase}. */
function nodeSqliteDatabase(sqlite: NodeSqliteModule, path: string): SqliteDatabase {
  let db: NodeDatabase;
  try {
    db = new sqlite.DatabaseSync(path);
  } catch (error) {
    throw renamed(error);
  }
  let open = true;
  let savepoints = 0;
  const exec = (sql: string): void => {
    try {
      db.exec(sql);
    } catch (error) {
      throw renamed(error);
    }
  };
  const inTransaction = (): boolean => open && db.isTransaction;
  const transaction = <A extends unknown[], T>(fn: (...args: A) => T, begin: string): ((...args: A) => T) => {
    return (...args: A): T => {
      // Inside a transaction, a savepoint: a failure undoes this function's writes only, as better-sqlite3 does.
      if (inTransaction()) {
        const name = `mcp_tasks_${++savepoints}`;
        exec(`SAVEPOINT ${name}`);
        try {
          const result = fn(...args);
          exec(`RELEASE ${name}`);
          return result;
        } catch (error) {
          if (inTransaction()) {
            exec(`ROLLBACK TO ${name}`);
            exec(`RELEASE ${name}`);
          }
          throw error;
        }
      }
      exec(begin);
      try {
        const result = fn(...args);
        exec("COMMIT");
        return result;
      } catch (error) {
        if (inTransaction()) exec("ROLLBACK");
        throw error;
      }
    };
  };
  return {
    prepare: ((sql: string) => {
      try {
        return statement(db.prepare(sql));
      } catch (error) {
        throw renamed(error);
      }
    }) as SqliteDatabase["prepare"],
    exec,
    pragma(sql: string, options: { simple?: boolean } = {}): unknown {
      const rows = statement(db.prepare(`PRAGMA ${sql}`)).all() as Array<Record<string, unknown>>;
      if (!options.simple) return rows;
      const first = rows[0];
      return first === undefined ? undefined : Object.values(first)[0];
    },
    transaction<A extends unknown[], T>(fn: (...args: A) => T): Transaction<A, T> {
      return Object.assign(transaction(fn, "BEGIN"), { immediate: transaction(fn, "BEGIN IMMEDIATE") });
    },
    get open() {
      return open;
    },
    get inTransaction() {
      return inTransaction();
    },
    close() {
      if (!open) return;
      open = false;
      db.close();
    },
  };
}
