/**
 * Rules every {@link WaitStore} implementation shares, so the stores cannot drift apart on which
 * event satisfies a wait or how an outcome is kept.
 */
import type { StoredEvent, WaitOutcome, WaitRecord } from "./wait-store.js";

/** Whether a stored event satisfies an event wait: same owner (null its own), same name, newer, not older than the wait's `since`. */
export function eventMatches(event: Pick<StoredEvent, "seq" | "owner" | "name" | "createdAt">, wait: WaitRecord): boolean {
  return (
    wait.kind === "event" &&
    event.owner === wait.owner &&
    event.name === wait.eventName &&
    event.seq > wait.afterSeq &&
    event.createdAt >= wait.since
  );
}

/** The checkpoint value a satisfied wait leaves: a step's stored form, which the run journal unwraps. */
export function storedOutcome(outcome: WaitOutcome): { value: WaitOutcome } {
  return { value: outcome };
}

/** The outcome kept under a wait's checkpoint, or null when none is kept (or the value is not one). */
export function stepValue(stored: unknown): WaitOutcome | null {
  if (stored === null || typeof stored !== "object") return null;
  const value = (stored as { value?: unknown }).value;
  return value !== null && typeof value === "object" && "fired" in value ? (value as WaitOutcome) : null;
}
