import { randomBytes } from "node:crypto";

/**
 * A new task id: the creation millisecond in nine base-36 digits, then 128 random bits from the
 * platform's CSPRNG in 32 hex digits (41 characters, `[0-9a-z]` only). The random part is what
 * makes ids unguessable when no authorization context binds them (T-ID-1, T-ID-2, T-SEC-2); it
 * alone carries more entropy than a version-4 UUID (122 bits).
 *
 * The prefix is for the stores: ids made close together sort next to each other, so the b-trees
 * keyed by id (the task table's key, the status history's index) take each new id at their right
 * edge, where one page holds a whole turn's creations, instead of on a random page per task. It
 * tells nothing a task's `createdAt` does not; nothing reads it back, so clocks that step back
 * cost only that locality.
 */
export function newTaskId(now: number = Date.now()): string {
  return Math.max(0, Math.floor(now)).toString(36).padStart(9, "0") + randomBytes(16).toString("hex");
}
