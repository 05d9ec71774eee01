import type { HttpConnectionOptions } from "../mcp/requestor/requestor-era.js";
import { SESSION_REVISION, STATELESS_REQUESTORS, type ProtocolRevision } from "../mcp/requestor/requestor-eras.js";

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
 * Which revision to speak to the server at `url`: the forced one; else a cached decision younger
 * than {@link ERA_CACHE_MS}; else each stateless era in turn is asked whether the server speaks it
 * (2026-07-28: `server/discover` with its envelope), and the session era is the answer when none
 * does — the answer cached. So a server that speaks only the session era costs one refused
 * question per target per hour, not one per call.
 */
export async function chooseEra(
  url: URL | string,
  connection: HttpConnectionOptions,
  options: { forced?: ProtocolRevision; cache?: EraCache; signal?: AbortSignal; now?: () => number } = {},
): Promise<ProtocolRevision> {
  if (options.forced) return options.forced;
  // Nothing to ask a server when there is only one way to speak to it.
  if (STATELESS_REQUESTORS.length === 0) return SESSION_REVISION;
  const now = options.now?.() ?? Date.now();
  const target = new URL(url).href;
  const cached = await options.cache?.load(target).catch(() => null);
  if (cached && now - Date.parse(cached.checkedAt) < ERA_CACHE_MS) return cached.revision;
  let revision: ProtocolRevision = SESSION_REVISION;
  for (const era of STATELESS_REQUESTORS) {
    if (await era.speaks(era.connect(url, connection), options.signal)) {
      revision = era.revision;
      break;
    }
  }
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
