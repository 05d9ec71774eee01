import type { TaskStore } from "./task-store.js";

/**
 * A store that only one server may run tasks from at a time (SQLite: one file on one machine).
 * A single-node engine takes the lock at start, before its recovery treats every active task as
 * left behind by a dead process — true only if no other server is using the store — and holds it
 * until the store closes. A process that dies, even by kill -9, lets it go with it.
 */
export interface WriterLockStore {
  /**
   * Takes the lock for this store's life (a second call is a no-op); stores without a file to
   * share (`:memory:`) have nothing to lock.
   * @throws StoreInUseError when another server holds it.
   */
  acquireWriterLock(): Promise<void>;
}

export function hasWriterLock(store: TaskStore): store is TaskStore & WriterLockStore {
  return typeof (store as Partial<WriterLockStore>).acquireWriterLock === "function";
}

/** Who holds a writer lock, as the holder recorded it (best effort: may be unknown). */
export interface WriterLockHolder {
  pid: number;
  host: string;
  /** When it took the lock (ms since the epoch). */
  since: number;
}

/**
 * A second server refused: another one runs tasks from the same store. Nothing was read or
 * written on its behalf; the message names the file (and the holder when it is known).
 */
export class StoreInUseError extends Error {
  constructor(
    /** The store's file. */
    readonly file: string,
    readonly holder: WriterLockHolder | null,
  ) {
    const who = holder ? ` (pid ${holder.pid} on ${holder.host}, since ${new Date(holder.since).toISOString()})` : "";
    super(
      `The task store ${file} is in use by another mcp-tasks server${who}: one server per SQLite file. ` +
        "Stop that server first, or give this one its own file (a cluster shares PostgreSQL instead).",
    );
    this.name = "StoreInUseError";
  }
}
