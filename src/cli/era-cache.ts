import { createHash } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { CachedEra, EraCache } from "../client/era-choice.js";
import { PROTOCOL_REVISIONS } from "../mcp/requestor/requestor-eras.js";
import { writeFileAtomic } from "./atomic-file.js";

/**
 * Each target's protocol era, one file per target under `<stateDir>/eras/` (named by a digest of
 * the URL), so that a run against a 2025-11-25-only server does not first send a `server/discover`
 * it will refuse: one is sent per target per hour (ERA_CACHE_MS). Files are replaced whole
 * (atomic-file.ts): concurrent runs read one decision or the other, never a torn one.
 */
export function fileEraCache(dir: string): EraCache {
  const path = (target: string): string => join(dir, "eras", `${createHash("sha256").update(target).digest("hex").slice(0, 32)}.json`);
  return {
    async load(target) {
      try {
        const value = JSON.parse(await readFile(path(target), "utf8")) as Partial<CachedEra> & { target?: string };
        if (value.target !== target || typeof value.checkedAt !== "string") return null;
        if (!(PROTOCOL_REVISIONS as readonly unknown[]).includes(value.revision)) return null;
        return { revision: value.revision as CachedEra["revision"], checkedAt: value.checkedAt };
      } catch {
        return null;
      }
    },
    async save(target, era) {
      await mkdir(join(dir, "eras"), { recursive: true, mode: 0o700 });
      await writeFileAtomic(path(target), `${JSON.stringify({ target, ...era }, null, 2)}\n`, 0o600);
    },
  };
}
