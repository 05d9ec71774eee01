import type { EventBus, Unsubscribe } from "./event-bus.js";
import type { TaskEvent } from "./task-event.js";

/**
 * A view of `bus` that also tells `heard` listeners of every event this process publishes (its own
 * writes), apart from those other nodes send. Everything else is `bus` itself. A listener that
 * must act at once on this process's own transitions, and only as a backstop on other nodes' —
 * the webhook sender — subscribes here, so a cluster's every node does not race for each event.
 */
export function publishedHere(bus: EventBus): { bus: EventBus; onPublished(listener: (event: TaskEvent) => void): Unsubscribe } {
  const listeners = new Set<(event: TaskEvent) => void>();
  const tell = (event: TaskEvent): void => {
    for (const listener of [...listeners]) listener(event);
  };
  // Delegates by prototype: whatever else the bus offers (its optional members included) stays as it is.
  const view: EventBus = Object.create(bus) as EventBus;
  view.publish = (event) => {
    bus.publish(event);
    tell(event);
  };
  if (bus.publishHere !== undefined) {
    const here = bus.publishHere.bind(bus);
    view.publishHere = (event) => {
      here(event);
      tell(event);
    };
  }
  return {
    bus: view,
    onPublished(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
