import type { Logger } from "../core/logger.js";
import { pause } from "../core/pause.js";
import { storageCondition } from "../core/storage-condition.js";

/** Waits between attempts: from 250 ms, doubling to 5 s; about two minutes in all. */
const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 5_000;
const ATTEMPTS = 30;

export interface RetryBound {
  /**
   * Retry for as long as this says so, however many attempts that takes, instead of giving up
   * after about two minutes: a claimed task's outcome is retried for as long as its worker holds
   * the claim. Read before each wait; false ends the retries with the last error.
   */
  while?: () => boolean;
  /** Cuts a wait short (the claim was lost meanwhile): the next attempt, if any, is made at once. */
  signal?: AbortSignal;
}

/**
 * Runs a write the engine must not drop — a finished handler's outcome — again while it fails on
 * a storage condition an operator can clear or that clears by itself (a full disk, a read-only or
 * locked file, a database restarting or out of reach): giving up at once would leave the task
 * `working` in the store with no handler behind it, stuck until the next restart or until its
 * lease runs out. Other errors, and the last attempt's, propagate.
 */
export async function retryOnStorageCondition<T>(
  write: () => Promise<T>,
  logger: Logger,
  fields: Record<string, unknown>,
  bound: RetryBound = {},
): Promise<T> {
  let delay = FIRST_DELAY_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      const condition = storageCondition(error);
      const goOn = bound.while ? bound.while() : attempt < ATTEMPTS;
      if (!condition || !goOn) throw error;
      logger.warn({ ...fields, reason: condition.reason, attempt, retryInMs: delay, err: error }, "task store write failed; retrying");
      // A cut-short wait is not an error here: the next attempt, if any, is made at once.
      await pause(delay, bound.signal).catch(() => undefined);
      delay = Math.min(delay * 2, MAX_DELAY_MS);
    }
  }
}
