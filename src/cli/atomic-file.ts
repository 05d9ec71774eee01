import { randomBytes } from "node:crypto";
import { rename, rm, writeFile } from "node:fs/promises";

/**
 * Replaces a file's content all at once: written to a temporary file beside it, then renamed over
 * it. Several CLI processes share the state directory; a reader must never see a half-written file
 * (it would take a torn session record for none and open a new session), and two writers must
 * leave one whole version, not a mix.
 */
export async function writeFileAtomic(path: string, data: string, mode: number): Promise<void> {
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    await writeFile(temporary, data, { mode, flag: "wx" });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
