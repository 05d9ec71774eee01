import { isTerminal, type TaskStatus } from "../core/task-status.js";
import type { TaskProgress } from "../core/task.js";
import type { TaskEvent } from "../events/task-event.js";
import type { Logger } from "../core/logger.js";
import type { TaskEngine } from "../runtime/task-engine.js";
import type { TaskFilter } from "../store/task-store.js";
import { toSummary, type TaskSummary } from "./task-view.js";
import { canSee, type Viewer } from "./viewer.js";

/** What the feed sends a subscriber: a task's new state, or the viewer's counts per status. */
export type FeedMessage = { event: "task"; data: TaskSummary } | { event: "counts"; data: Record<TaskStatus, number> };

interface Subscriber {
  viewer: Viewer;
  /** What the subscriber's counts per status count (the page's filters, within the viewer's scope). */
  counting: TaskFilter;
  send(message: FeedMessage): void;
}

/** Timing of the feed. */
export interface FeedOptions {
  /** Events of one task within this window become one store read and one message. Default 50 ms. */
  coalesceMs?: number;
  /**
   * Counts per status are re-read at most this often, and only after a status event: the feed
   * never recounts per event, and the counts it sends are at most this stale. For the page's scope
   * and tool filters the store answers from its kept counts (a few rows, whatever the number of
   * tasks); for its id, owner-name and time filters it counts the matching rows, once per
   * interval per distinct filter however many pages watch it. Default 1000 ms.
   */
  countsEveryMs?: number;
}

/**
 * Live task updates for the web view, fed by the engine's event bus. Bus events carry ids, not
 * state, so the feed re-reads each changed task once per short window and sends its summary to
 * every subscriber allowed to see it. It listens to the bus only while someone is subscribed: an
 * unwatched server pays nothing for it.
 */
export class TaskFeed {
  private readonly subscribers = new Set<Subscriber>();
  private stopListening: (() => void) | null = null;
  /** Tasks with events not yet sent, with the latest progress an event carried. */
  private pending = new Map<string, { progress: TaskProgress | null }>();
  private flushTimer: NodeJS.Timeout | null = null;
  private countsTimer: NodeJS.Timeout | null = null;
  private lastCountsAt = 0;
  /** A status changed since the counts were last sent (progress alone never changes them). */
  private countsDirty = false;
  private readonly coalesceMs: number;
  private readonly countsEveryMs: number;

  constructor(
    private readonly engine: TaskEngine,
    private readonly logger: Logger,
    options: FeedOptions = {},
  ) {
    this.coalesceMs = options.coalesceMs ?? 50;
    this.countsEveryMs = options.countsEveryMs ?? 1000;
  }

  /**
   * Starts sending `viewer`'s updates to `send`, with counts per status of the tasks `counting`
   * matches (default: all the viewer may see); call the returned function to stop.
   */
  subscribe(viewer: Viewer, send: (message: FeedMessage) => void, counting: TaskFilter = { scope: viewer.scope }): () => void {
    const subscriber: Subscriber = { viewer, counting, send };
    this.subscribers.add(subscriber);
    this.stopListening ??= this.engine.bus.onAny((event) => this.onEvent(event));
    return () => {
      this.subscribers.delete(subscriber);
      if (this.subscribers.size > 0) return;
      this.stopListening?.();
      this.stopListening = null;
      this.pending.clear();
      if (this.flushTimer) clearTimeout(this.flushTimer);
      if (this.countsTimer) clearTimeout(this.countsTimer);
      this.flushTimer = this.countsTimer = null;
    };
  }

  get size(): number {
    return this.subscribers.size;
  }

  private onEvent(event: TaskEvent): void {
    const entry = this.pending.get(event.taskId) ?? { progress: null };
    if (event.type === "progress") entry.progress = event.progress;
    if (event.type === "status") this.countsDirty = true;
    this.pending.set(event.taskId, entry);
    this.flushTimer ??= setTimeout(() => void this.flush(), this.coalesceMs);
  }

  private async flush(): Promise<void> {
    this.flushTimer = null;
    const batch = this.pending;
    this.pending = new Map();
    for (const [taskId, { progress }] of batch) {
      try {
        const task = await this.engine.inspect.task(taskId);
        if (!task) continue;
        const summary = toSummary(task);
        // The bus can be ahead of the store for progress (it is written after being published).
        if (progress !== null && !isTerminal(task.status)) summary.progress = progress;
        for (const subscriber of this.subscribers) {
          if (canSee(subscriber.viewer, task.owner)) subscriber.send({ event: "task", data: summary });
        }
      } catch (error) {
        this.logger.warn({ taskId, err: error }, "web view: could not read a changed task");
      }
    }
    this.scheduleCounts();
  }

  private scheduleCounts(): void {
    if (!this.countsDirty || this.countsTimer || this.subscribers.size === 0) return;
    const wait = Math.max(0, this.lastCountsAt + this.countsEveryMs - Date.now());
    this.countsTimer = setTimeout(() => void this.sendCounts(), wait);
  }

  private async sendCounts(): Promise<void> {
    this.countsTimer = null;
    this.countsDirty = false;
    this.lastCountsAt = Date.now();
    // One query per distinct filter, however many pages watch it.
    const byScope = new Map<string, Subscriber[]>();
    for (const subscriber of this.subscribers) {
      const key = JSON.stringify(subscriber.counting);
      byScope.set(key, [...(byScope.get(key) ?? []), subscriber]);
    }
    for (const group of byScope.values()) {
      const first = group[0];
      if (!first) continue;
      try {
        const counts = await this.engine.inspect.countByStatus(first.counting);
        for (const subscriber of group) subscriber.send({ event: "counts", data: counts });
      } catch (error) {
        this.logger.warn({ err: error }, "web view: could not count tasks");
      }
    }
  }
}
