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

/** Most events one emit stores (docs/limits.md): one store write holds them all. */
export const MAX_EVENTS_PER_BATCH = 1000;

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
    const [report] = await this.emitAll(caller, [this.checked(caller, name, payload, "")]);
    return report as EmitReport;
  }

  /**
   * Stores the events, in their order, in one store write, and wakes every task of the caller's
   * owner waiting for one of them; each is checked first (all or none is emitted). A batch costs
   * one commit, so an approver or a pipeline with thousands of events to send sends them together.
   */
  async emitMany(caller: Caller, events: readonly { name: unknown; payload: unknown }[]): Promise<EmitReport[]> {
    if (events.length > MAX_EVENTS_PER_BATCH) {
      throw TaskError.invalidParams(`At most ${MAX_EVENTS_PER_BATCH} events are emitted at once (${events.length} given)`);
    }
    const checked = events.map((event, i) => this.checked(caller, event.name, event.payload, `events[${i}]: `));
    return checked.length === 0 ? [] : this.emitAll(caller, checked);
  }

  private async emitAll(caller: Caller, events: Array<{ name: string; payload: unknown }>): Promise<EmitReport[]> {
    const { store, logger, observer, now } = this.deps;
    if (!isWaitStore(store)) throw new TaskError("internal", "This server's task store keeps no events");
    const at = now();
    const emitted = await store.emitEvents(
      events.map((event) => ({ owner: caller.owner, name: event.name, payload: event.payload, now: at })),
    );
    const woken: WokenTask[] = [];
    const reports = emitted.map(({ seq, woken: mine }, i) => {
      logger.info(
        {
          audit: "event_emitted",
          owner: caller.owner,
          event: events[i]?.name,
          woken: mine.length,
          peer: caller.peer ?? null,
          ...(caller.actingAs !== undefined && { actingAs: caller.actingAs }),
        },
        "event emitted",
      );
      observer.eventEmitted?.(mine.length);
      woken.push(...mine);
      return { seq, woken: mine.length };
    });
    if (woken.length > 0) this.deps.woken(woken);
    return reports;
  }

  /** The event as stored (its payload as JSON would give it back), or -32602 for a bad name or payload. */
  private checked(caller: Caller, name: unknown, payload: unknown, where: string): { name: string; payload: unknown } {
    const { logger, observer, maxEventBytes } = this.deps;
    if (typeof name !== "string" || !EVENT_NAME.test(name)) {
      throw TaskError.invalidParams(`${where}An event name is 1–200 letters, digits and . _ : / @ -, starting with a letter or digit`);
    }
    let json: string | undefined;
    try {
      json = JSON.stringify(payload ?? null);
    } catch {
      throw TaskError.invalidParams(`${where}The event payload must be JSON`);
    }
    const bytes = Buffer.byteLength(json ?? "null");
    if (bytes > maxEventBytes) {
      reportLimitHit(observer, logger, { limit: "event_bytes", owner: caller.owner, method: "events/emit", peer: caller.peer ?? null });
      throw TaskError.limitExceeded("event_bytes", maxEventBytes, `${where}The event payload exceeds ${maxEventBytes} bytes`, {
        code: RpcCode.InvalidParams,
        data: { bytes },
      });
    }
    return { name, payload: JSON.parse(json ?? "null") as unknown };
  }
}
