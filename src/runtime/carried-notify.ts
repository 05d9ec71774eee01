import type { EventBus } from "../events/event-bus.js";
import type { TaskEvent } from "../events/task-event.js";
import type { StoreNotify } from "../core/store-notify.js";
import type { TaskStore } from "../store/task-store.js";

/**
 * The NOTIFY to send with the store write that `event` describes, when store and bus can
 * (`TaskStore.sendsNotify`, `EventBus.notifyFor`: PostgreSQL, one database): other nodes then
 * hear of the write as it commits, without a statement of its own, and the caller publishes the
 * event only here (`publishHere`) once the write returned. Undefined: write, then `publish`.
 *
 * Used for the two events every task of a cluster has: its creation (which wakes the workers)
 * and its outcome (which wakes the waiting `tasks/result`).
 */
export function notifyWith(store: TaskStore, bus: EventBus, event: TaskEvent): StoreNotify | undefined {
  if (store.sendsNotify !== true || bus.notifyFor === undefined || bus.publishHere === undefined) return undefined;
  return bus.notifyFor(event) ?? undefined;
}

/** Publishes `event` after its write: only here when its NOTIFY went with the write, else everywhere. */
export function publishAfterWrite(bus: EventBus, event: TaskEvent, notify: StoreNotify | undefined): void {
  if (notify !== undefined && bus.publishHere !== undefined) bus.publishHere(event);
  else bus.publish(event);
}
