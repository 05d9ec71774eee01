import { setTimeout as timer } from "node:timers/promises";

/**
 * Resolves after `ms`, or rejects as soon as `signal` aborts — with the signal's own reason, not
 * Node's generic AbortError, so whoever aborted (a cancelled task, a caller's deadline, a drain)
 * is what the waiter sees.
 */
export async function pause(ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await timer(ms, undefined, signal !== undefined ? { signal } : undefined);
  } catch (error) {
    throw signal?.aborted ? signal.reason : error;
  }
}
