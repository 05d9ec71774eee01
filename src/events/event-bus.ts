import type { TaskEvent } from "./task-event.js";

export type Unsubscribe = () => void;

/**
 * Publish/subscribe of {@link TaskEvent}s by task id. Implementations: in-process (one node) and,
 * for a cluster, PostgreSQL LISTEN/NOTIFY. Delivery is at-most-once and best effort; waiters
 * always re-read the store after a wake-up and keep a long backstop re-check.
 */
export interface EventBus {
  publish(event: TaskEvent): void;
  /** Events of one task. */
  onTask(taskId: string, listener: (event: TaskEvent) => void): Unsubscribe;
  /** Every event (observers: notifications to sessions, metrics, the web view). */
  onAny(listener: (event: TaskEvent) => void): Unsubscribe;
  close(): Promise<void>;
}
