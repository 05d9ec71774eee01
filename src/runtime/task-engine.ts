import { publishedHere } from "../events/published-here.js";
import type { AbortWatch } from "../core/abort-watch.js";
import type { Caller } from "../core/caller.js";
import type { TaskKey } from "../core/idempotency.js";
import { silentLogger, type Logger } from "../core/logger.js";
import type { InputRequest, TaskOutcome, TaskRecord } from "../core/task.js";
import { DEFAULT_TTL_POLICY, type TtlPolicy } from "../core/ttl-policy.js";
import type { EventBus } from "../events/event-bus.js";
import type { TaskStore } from "../store/task-store.js";
import type { DrainReport } from "./drain.js";
import { TaskCreation, type CreateTaskInput, type KeyedTask } from "./engine/task-creation.js";
import { TaskLifecycle } from "./engine/task-lifecycle.js";
import { TaskLookups, type ListPage } from "./engine/task-lookups.js";
import { TaskWaiting, type TaskChange } from "./engine/task-waiting.js";
import { DEFAULT_MAX_EVENT_BYTES, TaskSignals, type EmitReport } from "./engine/task-signals.js";
import { silentObserver, type EngineObserver } from "./engine-observer.js";
import type { EngineOperation } from "./engine-operation.js";
import type { EngineOptions } from "./engine-options.js";
import { CallerLimits } from "./limits/caller-limits.js";
import { OwnerCounts } from "./limits/owner-counts.js";
import { DEFAULT_MAX_ACTIVE_PER_OWNER, DEFAULT_MAX_STORED_PER_OWNER } from "./limits/quotas.js";
import { taskReadPort, type TaskReadPort } from "./task-read-port.js";
import { untraced } from "./task-tracing.js";
import { isOutboxStore, type OutboxStore } from "../store/outbox-store.js";
import { parseWebhooks, type WebhookSettings } from "./webhooks/webhook-config.js";
import { WebhookSender } from "./webhooks/webhook-sender.js";
import { ToolPauses } from "./tool-pauses.js";
import type { ToolPause } from "../store/tool-pause-store.js";

export type { CreateTaskInput, KeyedTask } from "./engine/task-creation.js";
export type { ListPage } from "./engine/task-lookups.js";
export type { TaskChange } from "./engine/task-waiting.js";
export type { EmitReport } from "./engine/task-signals.js";

/**
 * The receiver engine: creates tasks, runs them, answers get/result/list/cancel. It knows nothing
 * of MCP's wire format; the `mcp` layer maps requests onto these calls.
 *
 * A façade over five parts, each a file of `engine/`: creation (the one path every task is made
 * by), lookups (owner-checked reads within the caller's limits), waiting (watch, the result's
 * wait, questions and answers), signals (events from outside that wake waiting tasks) and
 * lifecycle (running handlers, parking and waking, cancel, expiry, start, drain, close).
 */
export class TaskEngine {
  /**
   * The store itself, for the composition root that opened it (to close it) and for tests. The
   * layers above read through {@link inspect} and write through the engine's operations.
   */
  readonly store: TaskStore;
  /** What the layers above may read of the store (the web view, probes, cursors, sessions). */
  readonly inspect: TaskReadPort;
  readonly bus: EventBus;
  readonly logger: Logger;
  /** Monitoring hooks; the layers above report their own limit refusals through it too. */
  readonly observer: EngineObserver;
  readonly ttlPolicy: TtlPolicy;
  readonly pollIntervalMs: number | null;
  private readonly creation: TaskCreation;
  private readonly lookups: TaskLookups;
  private readonly waiting: TaskWaiting;
  private readonly lifecycle: TaskLifecycle;
  private readonly signals: TaskSignals;
  /** The checked webhook configuration (docs/webhooks.md); null when none was given. */
  readonly webhookSettings: WebhookSettings | null;
  /** The store's webhook outbox, when it keeps one (every store of this package does). */
  readonly outbox: OutboxStore | null;
  /** Sends the outbox's deliveries while the engine runs; null without a webhook configuration. */
  readonly webhookSender: WebhookSender | null;
  /** The paused tools as this node knows them (see ToolPauses). */
  private readonly pauses: ToolPauses;

  constructor(options: EngineOptions) {
    this.store = options.store;
    // The engine's own publishes are told apart from other nodes' events (the webhook sender acts
    // at once on the former only).
    const tapped = publishedHere(options.bus);
    this.bus = tapped.bus;
    this.logger = options.logger ?? silentLogger;
    this.observer = options.observer ?? silentObserver;
    this.ttlPolicy = { ...DEFAULT_TTL_POLICY, ...options.ttl };
    this.pollIntervalMs = options.pollIntervalMs === undefined ? 1000 : options.pollIntervalMs;
    const { store, bus, logger, observer } = this;
    this.webhookSettings = options.webhooks === undefined ? null : parseWebhooks(options.webhooks);
    this.outbox = isOutboxStore(store) ? store : null;
    if (this.webhookSettings !== null && !isOutboxStore(store)) throw new Error("webhooks need a task store that keeps an outbox");
    this.webhookSender =
      this.webhookSettings === null || !isOutboxStore(store)
        ? null
        : new WebhookSender({
            store,
            settings: this.webhookSettings,
            bus,
            publishedHere: tapped.onPublished,
            // A cluster's front runs no handler: the few events it writes are claimed, not leased.
            leaseOwnWrites: options.cluster === undefined || options.cluster.concurrency > 0,
            logger,
            ...(options.webhookObserver && { observer: options.webhookObserver }),
          });
    const tracing = options.tracing ?? untraced;
    const now = options.now ?? Date.now;
    this.pauses = new ToolPauses({ store, bus, logger, now });
    const pauses = this.pauses;
    const keepFinishedMs = options.keepFinishedMs ?? 0;
    const maxActivePerOwner = options.maxActivePerOwner ?? DEFAULT_MAX_ACTIVE_PER_OWNER;
    const maxStoredPerOwner = options.maxStoredPerOwner ?? DEFAULT_MAX_STORED_PER_OWNER;
    /** Per-caller limits (T-SEC-4): operation rate, failed lookups. */
    const limits = new CallerLimits(options, { now, observer, logger });
    const perOwner = options.maxRunningPerOwner ?? null;
    const byName = options.concurrencyByName;
    // A queued task is only held back by a cap: without one (an unbounded single node) it starts
    // within the turn, and a "queued" message would be noise on nearly every first read.
    // A paused tool holds its tasks back too.
    const mayQueue = (): boolean =>
      options.cluster !== undefined ||
      options.maxRunning !== undefined ||
      perOwner !== null ||
      Object.keys(byName?.() ?? {}).length > 0 ||
      pauses.list().length > 0;
    this.lookups = new TaskLookups({
      store,
      logger,
      tracing,
      limits,
      now,
      keepFinishedMs,
      pageSize: options.pageSize ?? 50,
      mayQueue,
      isPaused: (name) => pauses.isPaused(name),
    });
    this.waiting = new TaskWaiting({
      store,
      bus,
      logger,
      observer,
      limits,
      lookups: this.lookups,
      now,
      keepFinishedMs,
      backstopMs: options.backstopMs ?? 30_000,
    });
    this.lifecycle = new TaskLifecycle(
      {
        store,
        bus,
        logger,
        observer,
        tracing,
        lookups: this.lookups,
        waiting: this.waiting,
        now,
        keepFinishedMs,
        creationsSettled: () => this.creation.settled(),
      },
      options,
    );
    this.creation = new TaskCreation({
      store,
      bus,
      logger,
      observer,
      limits,
      ownerCounts: new OwnerCounts(store, { maxActive: maxActivePerOwner, maxStored: maxStoredPerOwner, now }),
      now,
      ttlPolicy: this.ttlPolicy,
      pollIntervalMs: this.pollIntervalMs,
      keepFinishedMs,
      maxActivePerOwner,
      maxStoredPerOwner,
      maxQueuedPerOwner: options.maxQueuedPerOwner ?? null,
      auditArguments: options.auditArguments ?? false,
      admitNew: () => this.lifecycle.admitNew(),
      isPaused: (name) => pauses.isPaused(name),
      schedule: (task) => this.lifecycle.schedule(task),
      webhooks: this.webhookSettings,
    });
    this.signals = new TaskSignals({
      store,
      logger,
      observer,
      now,
      maxEventBytes: options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES,
      woken: (tasks) => this.lifecycle.woken(tasks, "event"),
    });
    this.inspect = taskReadPort(store, this.lifecycle.clustered, keepFinishedMs, (name) => pauses.isPaused(name));
  }

  /** True when tasks are distributed through the store to workers (cluster mode). */
  get clustered(): boolean {
    return this.lifecycle.clustered;
  }

  /** True from the moment {@link drain} is called: new tasks are refused, running ones finish or are handed back. */
  get draining(): boolean {
    return this.lifecycle.draining;
  }

  /** Recovers what a dead process left running, starts the sweeper (and a cluster's workers); see TaskLifecycle.start. */
  async start(): Promise<void> {
    await this.pauses.start();
    await this.lifecycle.start();
    this.webhookSender?.start();
  }

  /** Refuses new tasks from now on; running handlers get `graceMs`, then are handed back (see TaskLifecycle.drain). */
  drain(graceMs: number): Promise<DrainReport> {
    return this.lifecycle.drain(graceMs);
  }

  /** Stops the engine: handlers still running are failed or handed back, every blocked wait answered (see TaskLifecycle.close). */
  async close(): Promise<void> {
    await this.webhookSender?.stop();
    this.pauses.stop();
    await this.lifecycle.close();
  }

  /**
   * Creates a task in `working` (T-LIFE-1) and schedules its handler after the caller has had the
   * chance to answer with the snapshot (T-NEW-2: returned before the work runs).
   */
  async create(input: CreateTaskInput): Promise<TaskRecord> {
    return (await this.creation.create(input, null)).task;
  }

  /**
   * {@link create} under an idempotency key (SEP-3182): the task the key names already (`created`
   * false, nothing run) or the new one; a different call under the key is a conflict (-32602).
   */
  createKeyed(input: CreateTaskInput, key: TaskKey): Promise<KeyedTask> {
    return this.creation.create(input, key);
  }

  /** T-GET-1; a foreign, unknown or malformed id is "not found" (T-ERR-1, T-SEC-3). */
  get(taskId: unknown, caller: Caller): Promise<TaskRecord> {
    return this.lookups.get(taskId, caller);
  }

  /** T-LIST: keyset pages of the owner's tasks with an opaque signed cursor. */
  list(cursor: unknown, caller: Caller): Promise<ListPage> {
    return this.lookups.list(cursor, caller);
  }

  /** T-CANCEL: moves the task to `cancelled` before answering, then aborts its handler wherever it runs. */
  cancel(taskId: unknown, caller: Caller, options: { statusMessage?: string } = {}): Promise<TaskRecord> {
    return this.lifecycle.cancel(taskId, caller, options);
  }

  /** Follows a task until it ends (T-RES-3), woken by events; see TaskWaiting.watch. */
  watch(
    taskId: unknown,
    caller: Caller,
    signal: AbortWatch,
    operation: EngineOperation = "watch",
  ): AsyncGenerator<TaskChange, void, undefined> {
    return this.waiting.watch(taskId, caller, signal, operation);
  }

  /** Follows a task until it ends as {@link watch} does, handing each step to `onStep`; see TaskWaiting.follow. */
  follow(
    taskId: unknown,
    caller: Caller,
    signal: AbortWatch,
    onStep: (change: TaskChange) => void | Promise<void>,
    operation: EngineOperation = "watch",
  ): Promise<void> {
    return this.waiting.follow(taskId, caller, signal, onStep, operation);
  }

  /** Waits until the task is terminal and returns it (T-RES-2, T-RES-3, T-RES-4); `onChange` sees every step before. */
  awaitOutcome(
    taskId: unknown,
    caller: Caller,
    signal: AbortWatch,
    onChange?: (change: TaskChange) => void | Promise<void>,
  ): Promise<TaskRecord> {
    return this.waiting.awaitOutcome(taskId, caller, signal, onChange);
  }

  /** Records that a finished task's result went to its requestor (best effort). */
  delivered(task: TaskRecord): void {
    this.waiting.delivered(task);
  }

  /** Gives back the operation token of a wait another path of the binding answers, so one request counts once. */
  handedOn(taskId: string, caller: Caller): void {
    this.waiting.handedOn(taskId, caller);
  }

  /** The task's unanswered questions, oldest first; "not found" for a task the caller may not see. */
  pendingInputs(taskId: unknown, caller: Caller): Promise<InputRequest[]> {
    return this.waiting.pendingInputs(taskId, caller);
  }

  /** Audits that one of a task's questions was put to its requestor (T-SEC-5). */
  inputDelivered(task: TaskRecord, input: InputRequest, caller: Caller): void {
    this.waiting.inputDelivered(task, input, caller);
  }

  /** Records the requestor's answer to one of a task's questions (checked against its schema); false when unknown or already answered. */
  respond(taskId: unknown, caller: Caller, inputId: string, answer: TaskOutcome): Promise<boolean> {
    return this.waiting.respond(taskId, caller, inputId, answer);
  }

  /**
   * Emits an event of the caller's owner (docs/durable-execution.md, Events): stored for the event
   * window, and every task of that owner waiting for `name` wakes. -32602 for a bad name or a
   * payload over the limit.
   */
  emit(caller: Caller, name: unknown, payload: unknown): Promise<EmitReport> {
    this.lifecycle.admitEvents();
    return this.signals.emit(caller, name, payload);
  }

  /**
   * Emits the events in one store write, in their order, each as {@link emit} does (at most
   * MAX_EVENTS_PER_BATCH; every one is checked before any is stored); their reports in the same order.
   */
  emitMany(caller: Caller, events: readonly { name: unknown; payload: unknown }[]): Promise<EmitReport[]> {
    this.lifecycle.admitEvents();
    return this.signals.emitMany(caller, events);
  }

  /**
   * Pauses a tool across every node sharing the store, until {@link resumeTool}: its new tasks are
   * created and queued (their status message says the tool is paused), none of its queued tasks
   * starts — a parked one that wakes included — and its running tasks go on. Stored, so it
   * survives a restart. `by` names who paused it in the audit log. False when it was paused already.
   */
  async pauseTool(name: string, by: string): Promise<boolean> {
    const changed = await this.pauses.pause(name, by);
    this.logger.info({ audit: "tool_paused", tool: name, principal: by, changed }, changed ? "tool paused" : "tool was paused already");
    return changed;
  }

  /** Resumes a paused tool: its queued tasks start as slots and caps allow, on every node. False when it was not paused. */
  async resumeTool(name: string, by: string): Promise<boolean> {
    const changed = await this.pauses.resume(name);
    this.logger.info({ audit: "tool_resumed", tool: name, principal: by, changed }, changed ? "tool resumed" : "tool was not paused");
    return changed;
  }

  /** The paused tools as this node last read them (every pause or resume, of any node, re-reads them). */
  pausedTools(): ToolPause[] {
    return this.pauses.list();
  }

  /** Whether `name` is paused, as this node last read it. */
  isPaused(name: string): boolean {
    return this.pauses.isPaused(name);
  }

  /** Runs the sweeper once now (tests, and operators who want an immediate cleanup). */
  sweep(): Promise<void> {
    return this.lifecycle.sweep();
  }
}
