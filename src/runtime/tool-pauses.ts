import { TaskError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { EventBus, Unsubscribe } from "../events/event-bus.js";
import type { TaskStore } from "../store/task-store.js";
import { isToolPauseStore, type ToolPause, type ToolPauseStore } from "../store/tool-pause-store.js";

/**
 * The task id of the `wake` a pause or a resume publishes: no task has it. Every node re-reads
 * its paused tools on it, and every claimer claims (a resumed tool's queued tasks start at once).
 */
export const TOOL_PAUSES_CHANGED = "tool-pauses";

/** The `wake` a bus publishes after reconnecting (pg-event-bus.ts ANY_TASK): what was sent meanwhile was lost. */
const ANY_TASK = "*";

/**
 * The paused tools as this node knows them, for what must answer without a store read: the
 * status message of a created or queued task of a paused tool, `tools/list`, the metrics gauge.
 * Which tasks start is never decided here: the store's claim reads the stored pauses itself, so a
 * node that has not heard of a pause yet still starts nothing of the tool.
 *
 * Kept fresh by the pause and resume operations of any node (their `wake` crosses the cluster's
 * bus), and re-read whenever the bus may have lost events (its reconnection `wake`).
 */
export class ToolPauses {
  private paused = new Map<string, ToolPause>();
  private unsubscribe: Unsubscribe | null = null;
  /** The re-read in flight, if any; one more follows it when asked for meanwhile. */
  private reading: Promise<void> | null = null;
  private again = false;

  constructor(private readonly deps: { store: TaskStore; bus: EventBus; logger: Logger; now: () => number }) {}

  /** Whether this store keeps paused tools (every store of this package does). */
  get supported(): boolean {
    return isToolPauseStore(this.deps.store);
  }

  /** Reads the stored pauses and follows their changes. */
  async start(): Promise<void> {
    if (!this.supported) return;
    this.unsubscribe ??= this.deps.bus.onAny((event) => {
      if (event.type === "wake" && (event.taskId === TOOL_PAUSES_CHANGED || event.taskId === ANY_TASK)) void this.refresh();
    });
    await this.refresh();
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  isPaused(name: string): boolean {
    return this.paused.has(name);
  }

  /** The paused tools, by name. */
  list(): ToolPause[] {
    return [...this.paused.values()];
  }

  /** Pauses `name` for the whole cluster; false when it was paused already. */
  async pause(name: string, by: string): Promise<boolean> {
    const store = this.requireStore();
    const changed = await store.pauseTool({ name, pausedAt: this.deps.now(), pausedBy: by });
    await this.changed();
    return changed;
  }

  /** Resumes `name`: its queued tasks start as slots allow, on every node; false when it was not paused. */
  async resume(name: string): Promise<boolean> {
    const store = this.requireStore();
    const changed = await store.resumeTool(name);
    await this.changed();
    return changed;
  }

  /** This node re-reads at once; the others (and every claimer, this node's included) hear the `wake`. */
  private async changed(): Promise<void> {
    await this.refresh();
    this.deps.bus.publish({ type: "wake", taskId: TOOL_PAUSES_CHANGED });
  }

  private requireStore(): ToolPauseStore {
    const { store } = this.deps;
    if (!isToolPauseStore(store)) throw TaskError.invalidParams("This server's task store does not keep paused tools");
    return store;
  }

  private refresh(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    const store = this.deps.store;
    if (!isToolPauseStore(store)) return Promise.resolve();
    this.reading = (async () => {
      do {
        this.again = false;
        try {
          this.paused = new Map((await store.pausedTools()).map((pause) => [pause.name, pause]));
        } catch (err) {
          this.deps.logger.warn({ err }, "reading the paused tools failed; the next pause, resume or bus reconnection reads them again");
        }
      } while (this.again);
    })().finally(() => (this.reading = null));
    return this.reading;
  }
}
