/**
 * A small filesystem of its own (tmpfs, `mount -t tmpfs -o size=…`), for the full-disk and
 * read-only scenarios: needs root (the suite's machines run as root; say so rather than skip).
 */
import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";

export interface SmallDisk {
  dir: string;
  /** Writes a filler file until the filesystem is full (ENOSPC). */
  fill(): void;
  /** Removes the filler: the space is back. */
  free(): void;
  /** Remounts read-only (true) or read-write (false). */
  readOnly(on: boolean): void;
  unmount(): void;
}

export function mountSmallDisk(parent: string, size = "2M"): SmallDisk {
  if (process.getuid?.() !== 0) throw new Error("the small-disk scenarios mount a tmpfs and need root");
  const dir = join(parent, "disk");
  mkdirSync(dir, { recursive: true });
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir]);
  const filler = join(dir, "filler");
  return {
    dir,
    fill() {
      const fd = openSync(filler, "a");
      const chunk = Buffer.alloc(4096, 1);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
      } finally {
        closeSync(fd);
      }
    },
    free() {
      rmSync(filler, { force: true });
    },
    readOnly(on) {
      execFileSync("mount", ["-o", `remount,${on ? "ro" : "rw"}`, dir]);
    },
    unmount() {
      execFileSync("umount", ["-l", dir]);
    },
  };
}
