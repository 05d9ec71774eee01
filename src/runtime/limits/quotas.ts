/**
 * The engine's quotas (T-TTL-7): their defaults, and the one way a refusal is reported, so each
 * limit is counted in the metrics and leaves the same audit line.
 */
import type { EngineObserver, LimitName } from "../engine-observer.js";
import type { Logger } from "../../core/logger.js";

/** Non-terminal tasks one owner may have at once. */
export const DEFAULT_MAX_ACTIVE_PER_OWNER = 100;

/**
 * Tasks one owner may have stored, whatever their status, until the sweeper deletes them. Bounds
 * what one requestor can make the store hold when its tasks finish fast and live long.
 */
export const DEFAULT_MAX_STORED_PER_OWNER = 10_000;

/** Unanswered input requests one task may have queued at once. */
export const DEFAULT_MAX_QUEUED_INPUTS = 16;

/** Largest result (or error) a task may end with, as serialized JSON bytes: 4 MiB. */
export const DEFAULT_MAX_RESULT_BYTES = 4 * 1024 * 1024;

/** What was refused, for the audit log (T-SEC-5): which limit, who, and on what. */
export interface LimitHit {
  limit: LimitName;
  owner: string | null;
  /** The JSON-RPC method refused (the task's own method for a limit hit while it runs). */
  method: string;
  /** The caller's address (the task creator's for a limit hit while it runs); null when unknown. */
  peer: string | null;
  taskId?: string;
}

/** Counts the refusal and writes the audit line `{ audit: "limit_hit", limit, owner, method, peer, taskId }`. */
export function reportLimitHit(observer: EngineObserver, logger: Logger, hit: LimitHit): void {
  observer.limitRejected(hit.limit);
  logger.warn({ audit: "limit_hit", ...hit, taskId: hit.taskId ?? null }, `limit hit: ${hit.limit}`);
}
