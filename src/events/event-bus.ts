import type { StoreNotify } from "../core/store-notify.js";
import type { TaskEvent } from "./task-event.js";

/** Stops the listener it was returned for. */
export type Unsubscribe = () => void;

/**
 * Publish/subscribe of {@link TaskEvent}s by task id. Implementations: in-process (one node) and,
 * for a cluster, PostgreSQL LISTEN/NOTIFY. Delivery is at-most-once and best effort; waiters
 * always re-read the store after a wake-up and keep a long backstop re-check.
 */
export interface EventBus {
  publish(event: TaskEvent): void;
  /**
   * A bus on the database of a store that `sendsNotify` (TaskStore): the NOTIFY that tells
   * other nodes of `event` when sent by the write the event describes (in its statement, so on
   * commit, with no statement of its own), or null when it cannot travel so: too large, or
   * events of the same task are still on their way out, which it must not overtake. After that
   * write, {@link publishHere} delivers the event to this node's listeners.
   */
  notifyFor?(event: TaskEvent): StoreNotify | null;
  /** Delivers `event` to this node's listeners only (its NOTIFY went with a store write). */
  publishHere?(event: TaskEvent): void;
  /** Events of one task. */
  onTask(taskId: string, listener: (event: TaskEvent) => void): Unsubscribe;
  /** Every event (observers: notifications to sessions, metrics, the web view). */
  onAny(listener: (event: TaskEvent) => void): Unsubscribe;
  /**
   * Whether this node wants to hear other nodes' events (it does until told otherwise). A node
   * with nothing to hear for a while — a standby worker running no handler — says no, and stops
   * costing the database and itself a delivery of every event of the cluster. Saying yes again
   * wakes every waiter and observer here (a `wake` event), since what was sent meanwhile went
   * unheard. Resolves once the bus listens (or not) as asked, or has failed to and logged why.
   * Absent on a bus of one node, which has no other nodes to hear.
   */
  hearOthers?(wanted: boolean): Promise<void>;
  close(): Promise<void>;
}
