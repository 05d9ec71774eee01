import { memoryStore } from "./memory-store.js";
import { sqliteStore } from "./sqlite-store.js";
import type { TaskStore } from "./task-store.js";

/** The store specs {@link openStore} understands, for help texts and error messages. */
export const STORE_SPEC_FORMS = ["memory", "sqlite:PATH", "PATH.db"] as const;

/**
 * Opens the store a configuration string names:
 * - `memory`: {@link memoryStore}, lost on exit;
 * - `sqlite:PATH`: {@link sqliteStore} at PATH (`sqlite::memory:` for a private in-memory database);
 * - a path ending in `.db`: the same as `sqlite:PATH`.
 *
 * @throws Error naming the accepted forms for anything else.
 */
export function openStore(spec: string): TaskStore {
  if (spec === "memory") return memoryStore();
  if (spec.startsWith("sqlite:")) {
    const path = spec.slice("sqlite:".length);
    if (path === "") throw new Error(`Invalid store "${spec}": sqlite: needs a file path, e.g. sqlite:./data/tasks.db`);
    return sqliteStore(path);
  }
  // A URL scheme (postgres://, redis://…) is never a file name, even when it ends in .db.
  if (spec.endsWith(".db") && !/^[a-z][a-z0-9+.-]*:\/\//i.test(spec)) return sqliteStore(spec);
  throw new Error(`Unsupported store "${spec}": expected one of ${STORE_SPEC_FORMS.join(", ")}`);
}
