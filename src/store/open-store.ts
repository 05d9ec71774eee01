import type { Logger } from "../core/logger.js";
import { memoryStore } from "./memory/memory-store.js";
import { postgresStore } from "./postgres/postgres-store.js";
import { sqliteStore } from "./sqlite/sqlite-store.js";
import type { TaskStore } from "./task-store.js";

/** The store specs {@link openStore} understands, for help texts and error messages. */
export const STORE_SPEC_FORMS = ["memory", "sqlite:PATH", "PATH.db", "postgres://URL[?schema=NAME]"] as const;

export interface OpenStoreOptions {
  /** Handed to stores that log (PostgreSQL: migrations, dropped connections). */
  logger?: Pick<Logger, "info" | "warn">;
}

/**
 * A PostgreSQL URL's `schema` query parameter names the store's schema; it is taken out of the
 * URL, which goes to the driver without it. Every other parameter (sslmode, application_name, …)
 * is the driver's.
 */
function splitPostgresSpec(spec: string): { connectionString: string; schema: string | undefined } {
  let url: URL;
  try {
    url = new URL(spec);
  } catch {
    throw new Error(`Invalid store "${spec}": not a valid PostgreSQL URL, e.g. postgres://user@host:5432/db?schema=mcp_tasks`);
  }
  const schemas = url.searchParams.getAll("schema");
  if (schemas.length === 0) return { connectionString: spec, schema: undefined };
  if (schemas.length > 1) throw new Error(`Invalid store "${spec}": schema is given more than once`);
  url.searchParams.delete("schema");
  return { connectionString: url.toString(), schema: schemas[0] };
}

/**
 * Opens the store a configuration string names:
 * - `memory`: {@link memoryStore}, lost on exit;
 * - `sqlite:PATH`: {@link sqliteStore} at PATH (`sqlite::memory:` for a private in-memory database);
 * - a path ending in `.db`: the same as `sqlite:PATH`;
 * - `postgres://…` or `postgresql://…`: {@link postgresStore}, a cluster store (with leases) shared
 *   by every node; `?schema=NAME` picks the schema (default `mcp_tasks`) and is removed from the
 *   URL given to the driver. Nothing connects until the store is first used.
 *
 * @throws Error naming the accepted forms for anything else.
 */
export function openStore(spec: string, options: OpenStoreOptions = {}): TaskStore {
  if (spec === "memory") return memoryStore();
  if (spec.startsWith("sqlite:")) {
    const path = spec.slice("sqlite:".length);
    if (path === "") throw new Error(`Invalid store "${spec}": sqlite: needs a file path, e.g. sqlite:./data/tasks.db`);
    return sqliteStore(path);
  }
  if (/^postgres(ql)?:\/\//i.test(spec)) {
    const { connectionString, schema } = splitPostgresSpec(spec);
    return postgresStore(connectionString, { ...(schema === undefined ? {} : { schema }), ...options });
  }
  // A URL scheme (redis://…) is never a file name, even when it ends in .db.
  if (spec.endsWith(".db") && !/^[a-z][a-z0-9+.-]*:\/\//i.test(spec)) return sqliteStore(spec);
  throw new Error(`Unsupported store "${spec}": expected one of ${STORE_SPEC_FORMS.join(", ")}`);
}
