import type { EventBus, Unsubscribe } from "./event-bus.js";
import type { TaskEvent } from "./task-event.js";

type Listener = (event: TaskEvent) => void;

/** The in-process bus: a map of listener sets, synchronous dispatch, listener errors isolated. */
export function localEventBus(onListenerError: (error: unknown) => void = () => {}): EventBus {
  const byTask = new Map<string, Set<Listener>>();
  const any = new Set<Listener>();

  const call = (listener: Listener, event: TaskEvent): void => {
    try {
      listener(event);
    } catch (error) {
      onListenerError(error);
    }
  };

  return {
    publish(event) {
      const listeners = byTask.get(event.taskId);
      // Copy: a listener may unsubscribe itself (waiters do) while we iterate.
      if (listeners) for (const listener of [...listeners]) call(listener, event);
      for (const listener of [...any]) call(listener, event);
    },
    onTask(taskId, listener): Unsubscribe {
      let set = byTask.get(taskId);
      if (!set) byTask.set(taskId, (set = new Set()));
      set.add(listener);
      return () => {
        const current = byTask.get(taskId);
        if (!current) return;
        current.delete(listener);
        if (current.size === 0) byTask.delete(taskId);
      };
    },
    onAny(listener): Unsubscribe {
      any.add(listener);
      return () => any.delete(listener);
    },
    async close() {
      byTask.clear();
      any.clear();
    },
  };
}
