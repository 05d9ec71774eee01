import { randomUUID } from "node:crypto";

/**
 * A new task id: a version-4 UUID from the platform's CSPRNG, 122 random bits, so ids cannot be
 * guessed even when no authorization context binds them (T-ID-1, T-ID-2, T-SEC-2).
 */
export function newTaskId(): string {
  return randomUUID();
}

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Cheap syntactic check used to answer malformed ids without touching storage. */
export function looksLikeTaskId(value: string): boolean {
  return UUID_V4.test(value);
}
