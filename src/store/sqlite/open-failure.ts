import { accessSync, constants, existsSync } from "node:fs";
import { dirname, resolve } from "node:path";

/**
 * The error to report when a SQLite file cannot be opened for serving: SQLite itself says only
 * "unable to open database file" (SQLITE_CANTOPEN) or "attempt to write a readonly database",
 * which names neither the file nor the reason. A server writes the file and, in WAL mode, the
 * `-wal` and `-shm` files beside it, so the file and its directory must both be writable.
 */
export function explainOpenFailure(path: string, error: unknown): Error {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !(code.startsWith("SQLITE_CANTOPEN") || code.startsWith("SQLITE_READONLY"))) return error as Error;
  const file = resolve(path);
  const why = unwritable(file) ?? unwritable(dirname(file));
  const reason = why ?? (code.startsWith("SQLITE_READONLY") ? "SQLite opened it read-only" : "SQLite could not open it");
  return Object.assign(
    new Error(
      `Cannot open the task store ${file} for writing: ${reason} (${code}). A server writes the file and the -wal and -shm files beside it.`,
      { cause: error },
    ),
    {
      code,
    },
  );
}

function unwritable(path: string): string | undefined {
  if (!existsSync(path)) return undefined;
  try {
    accessSync(path, constants.W_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EROFS") return `${path} is on a read-only filesystem`;
    if (code === "EACCES" || code === "EPERM") return `${path} is not writable by this user`;
    return undefined;
  }
}
