import type { Caller } from "../../core/caller.js";
import { RpcCode, TaskError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { TaskStore } from "../../store/task-store.js";
import { isWaitStore, type WokenTask } from "../../store/wait-store.js";
import type { EngineObserver } from "../engine-observer.js";
import { reportLimitHit } from "../limits/quotas.js";
import { EVENT_NAME } from "../run-waits.js";

interface SignalsDeps {
  store: TaskStore;
  logger: Logger;
  observer: EngineObserver;
  now: () => number;
  /** Largest event payload, as JSON bytes. */
  maxEventBytes: number;
  /** Tasks an event woke: tell whoever runs or claims them. */
  woken(tasks: WokenTask[]): void;
}

/** What an emit did. */
export interface EmitReport {
  /** The event's place in the store's sequence. */
  seq: number;
  /** How many waiting tasks it woke. */
  woken: number;
}

/** Default largest event payload (docs/limits.md). */
export const DEFAULT_MAX_EVENT_BYTES = 64 * 1024;

/**
 * Events from outside (docs/durable-execution.md, Events): an approver, a deploy pipeline, a
 * webhook of another system. An event belongs to the caller's owner and wakes only that owner's
 * tasks, so no tenant can wake another's work; `approval/<taskId>` addresses one task.
 */
export class TaskSignals {
  constructor(private readonly deps: SignalsDeps) {}

  /** Stores the event and wakes every task of the caller's owner waiting for `name`. */
  async emit(caller: Caller, name: unknown, payload: unknown): Promise<EmitReport> {
    const { store, logger, observer, now, maxEventBytes } = this.deps;
    if (typeof name !== "string" || !EVENT_NAME.test(name)) {
      throw TaskError.invalidParams("An event name is 1–200 letters, digits and . _ : / @ -, starting with a letter or digit");
    }
    let json: string | undefined;
    try {
      json = JSON.stringify(payload ?? null);
    } catch {
      throw TaskError.invalidParams("The event payload must be JSON");
    }
    const bytes = Buffer.byteLength(json ?? "null");
    if (bytes > maxEventBytes) {
      reportLimitHit(observer, logger, { limit: "event_bytes", owner: caller.owner, method: "events/emit", peer: caller.peer ?? null });
      throw TaskError.limitExceeded("event_bytes", maxEventBytes, `The event payload exceeds ${maxEventBytes} bytes`, {
        code: RpcCode.InvalidParams,
        data: { bytes },
      });
    }
    if (!isWaitStore(store)) throw new TaskError("internal", "This server's task store keeps no events");
    const { seq, woken } = await store.emitEvent({ owner: caller.owner, name, payload: JSON.parse(json ?? "null") as unknown, now: now() });
    logger.info(
      {
        audit: "event_emitted",
        owner: caller.owner,
        event: name,
        woken: woken.length,
        peer: caller.peer ?? null,
        ...(caller.actingAs !== undefined && { actingAs: caller.actingAs }),
      },
      "event emitted",
    );
    observer.eventEmitted?.(woken.length);
    if (woken.length > 0) this.deps.woken(woken);
    return { seq, woken: woken.length };
  }
}
