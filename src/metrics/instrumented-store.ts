import type { TaskRecord } from "../core/task.js";
import type { ClaimedTask } from "../store/claim.js";
import type { ExpiredBatch, KeyedCreation, TaskStore } from "../store/task-store.js";

/** What {@link instrumentStore} reports. */
export interface StoreHooks {
  /** Every store call, with how long it took and whether it failed. */
  operation(name: string, seconds: number, failed: boolean): void;
  /** A task was created through this store (this process made it). */
  created(task: TaskRecord): void;
  /** A status write of this process succeeded; `task` is the record it wrote. */
  moved(task: TaskRecord): void;
  /** A batch of tasks past their retention was deleted by this process. */
  expired(batch: ExpiredBatch): void;
  /** This process delivered a task's result for the first time (the store says it is the first). */
  fetched(): void;
  /**
   * This process claimed `task` for its first run, at `now` (the claim's clock, the one that
   * stamped `createdAt`): its handler starts now. A single node's claim (`claimRunnable`) only
   * ever takes queued tasks; a cluster's (`claim`) also re-takes tasks whose worker was lost, and
   * those re-runs are not reported.
   */
  started(task: TaskRecord, now: number): void;
}

/**
 * Wraps a store so that every call is timed and every successful create / status write is
 * reported. Counting writes here, where they happen, counts each task once per process that
 * made the change — so counters from several nodes of a cluster add up instead of repeating
 * events each node heard. A Proxy rather than a hand-written wrapper, so methods other
 * contracts add (a cluster store's leases) pass through, timed, and `isLeaseStore` still sees them.
 */
export function instrumentStore<S extends TaskStore>(store: S, hooks: StoreHooks): S {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== "function" || typeof property !== "string") return value;
      let wrapper = wrapped.get(property);
      if (wrapper === undefined) {
        const method = value as (...args: unknown[]) => unknown;
        wrapper = (...args: unknown[]): unknown => {
          const started = performance.now();
          const done = (failed: boolean): void => hooks.operation(property, (performance.now() - started) / 1000, failed);
          let result: unknown;
          try {
            result = method.apply(target, args);
          } catch (error) {
            done(true);
            throw error;
          }
          if (!(result instanceof Promise)) {
            done(false);
            return result;
          }
          return result.then(
            (resolved: unknown) => {
              done(false);
              if (property === "create") hooks.created(resolved as TaskRecord);
              else if (property === "createKeyed" && (resolved as KeyedCreation).created) hooks.created((resolved as KeyedCreation).task);
              else if (property === "transition" && resolved !== null) hooks.moved(resolved as TaskRecord);
              else if (property === "deleteExpired") hooks.expired(resolved as ExpiredBatch);
              else if (property === "markFetched" && resolved === true) hooks.fetched();
              else if (property === "claimRunnable") {
                for (const task of resolved as TaskRecord[]) hooks.started(task, args[1] as number);
              } else if (property === "claim") {
                for (const task of resolved as ClaimedTask[]) if (task.claim.attempt === 1) hooks.started(task, args[3] as number);
              }
              return resolved;
            },
            (error: unknown) => {
              done(true);
              throw error;
            },
          );
        };
        wrapped.set(property, wrapper);
      }
      return wrapper;
    },
  });
}
