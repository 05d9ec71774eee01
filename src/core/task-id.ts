import { randomUUID } from "node:crypto";

/**
 * A new task id: a version-4 UUID from the platform's CSPRNG, 122 random bits, so ids cannot be
 * guessed even when no authorization context binds them (T-ID-1, T-ID-2, T-SEC-2).
 */
export function newTaskId(): string {
  return randomUUID();
}
