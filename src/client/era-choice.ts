import type { ProtocolRevision } from "./requestor-era.js";
import { discover, DISCOVERED_REVISION, SESSION_REVISION, type StatelessConnection } from "./requestor-eras.js";

/** What a requestor remembers of a target's era between runs. */
export interface CachedEra {
  revision: ProtocolRevision;
  /** ISO 8601 time of the `server/discover` that decided it. */
  checkedAt: string;
}

/** Where era decisions are kept per target (the CLI: a file per target in its state directory). */
export interface EraCache {
  load(target: string): Promise<CachedEra | null>;
  save(target: string, era: CachedEra): Promise<void>;
}

/** How long a decision stands before `server/discover` is asked again. */
export const ERA_CACHE_MS = 60 * 60 * 1000;

/**
 * Which revision to speak to `connection`'s target: the forced one; else a cached decision younger
 * than {@link ERA_CACHE_MS}; else `server/discover` with the 2026-07-28 envelope — 2026-07-28 when
 * the server lists it, 2025-11-25 (initialize) when it refuses — and the answer cached. So a
 * 2025-only server costs one refused discover per target per hour, not one per call.
 */
export async function chooseEra(
  connection: StatelessConnection,
  options: { forced?: ProtocolRevision; cache?: EraCache; signal?: AbortSignal; now?: () => number } = {},
): Promise<ProtocolRevision> {
  if (options.forced) return options.forced;
  const now = options.now?.() ?? Date.now();
  const target = connection.url.href;
  const cached = await options.cache?.load(target).catch(() => null);
  if (cached && now - Date.parse(cached.checkedAt) < ERA_CACHE_MS) return cached.revision;
  const discovery = await discover(connection, options.signal);
  const revision: ProtocolRevision = discovery ? DISCOVERED_REVISION : SESSION_REVISION;
  await options.cache?.save(target, { revision, checkedAt: new Date(now).toISOString() }).catch(() => {});
  return revision;
}

/** An era cache in memory (one process). */
export function memoryEraCache(): EraCache {
  const entries = new Map<string, CachedEra>();
  return {
    async load(target) {
      return entries.get(target) ?? null;
    },
    async save(target, era) {
      entries.set(target, era);
    },
  };
}
