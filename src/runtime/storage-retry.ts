import type { Logger } from "../core/logger.js";
import { storageCondition } from "../core/storage-condition.js";

/** Waits between attempts: from 250 ms, doubling to 5 s; about two minutes in all. */
const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 5_000;
const ATTEMPTS = 30;

/**
 * Runs a write the engine must not drop — a finished handler's outcome — again while it fails on
 * a storage condition an operator can clear (a full disk, a read-only or locked file): giving up
 * at once would leave the task `working` in the store with no handler behind it, stuck until the
 * next restart. Other errors, and the last attempt's, propagate.
 */
export async function retryOnStorageCondition<T>(write: () => Promise<T>, logger: Logger, fields: Record<string, unknown>): Promise<T> {
  let delay = FIRST_DELAY_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (error) {
      const condition = storageCondition(error);
      if (!condition || attempt >= ATTEMPTS) throw error;
      logger.warn({ ...fields, reason: condition.reason, attempt, retryInMs: delay, err: error }, "task store write failed; retrying");
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, MAX_DELAY_MS);
    }
  }
}
