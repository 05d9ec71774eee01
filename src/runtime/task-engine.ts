import { CursorCodec } from "../core/cursor.js";
import type { Caller } from "../core/caller.js";
import { TaskError } from "../core/errors.js";
import { newTaskId } from "../core/task-id.js";
import { ACTIVE_STATUSES, allowedSources, isTerminal } from "../core/task-status.js";
import { isExpired, type InputRequest, type TaskOrigin, type TaskOutcome, type TaskRecord } from "../core/task.js";
import { DEFAULT_TTL_POLICY, resolveTtl, type TtlPolicy } from "../core/ttl-policy.js";
import type { EventBus } from "../events/event-bus.js";
import { isLeaseStore } from "../store/lease-store.js";
import type { TaskStore } from "../store/task-store.js";
import type { EngineOptions } from "./engine-options.js";
import { silentObserver, type EngineObserver } from "./engine-observer.js";
import { silentLogger, type Logger } from "../core/logger.js";
import { CallerLimits, type Attempt } from "./limits/caller-limits.js";
import { recoverInterruptedTasks } from "./upkeep/recovery.js";
import { OwnerCounts } from "./limits/owner-counts.js";
import { taskAuditFields } from "./task-audit.js";
import { Sweeper } from "./upkeep/sweeper.js";
import { LeaseReaper } from "./cluster/lease-reaper.js";
import {
  DEFAULT_MAX_ACTIVE_PER_OWNER,
  DEFAULT_MAX_QUEUED_INPUTS,
  DEFAULT_MAX_RESULT_BYTES,
  DEFAULT_MAX_STORED_PER_OWNER,
  reportLimitHit,
} from "./limits/quotas.js";
import { WorkerPool } from "./cluster/worker-pool.js";
import { TaskExecution } from "./task-execution.js";
import { statusEvent, type TaskEvent } from "../events/task-event.js";

/** What a binding passes to create a task: who asks (the owner it is bound to, the peer), and what. */
export interface CreateTaskInput extends Caller {
  method: string;
  name: string;
  request: unknown;
  origin: TaskOrigin;
  /** The raw requested ttl (validated here). */
  ttl: unknown;
  retryable?: boolean;
}

/**
 * Delivers a queued input request to the requestor and resolves with its answer. Rejects when the
 * delivery itself failed (stream closed): the request then stays queued for the next `tasks/result`.
 */
export type InputDelivery = (input: InputRequest, task: TaskRecord) => Promise<TaskOutcome>;

/**
 * A `tasks/result` caller that answers with one plain JSON response and has no stream: it says
 * which tasks would send it something only a stream can carry (notifications).
 */
export interface PlainWait {
  needsStream(task: TaskRecord): boolean;
}

/**
 * Thrown by {@link TaskEngine.awaitResult} for a {@link PlainWait} caller once the task has an
 * input request waiting, or needs a stream for another reason. Nothing was delivered or consumed;
 * the caller hands the request to a path that can stream.
 */
export class StreamRequiredError extends Error {
  constructor(readonly taskId: string) {
    super(`Task ${taskId} needs a stream to its requestor`);
    this.name = "StreamRequiredError";
  }
}

export interface ListPage {
  tasks: TaskRecord[];
  nextCursor?: string;
}

/**
 * The receiver engine: creates tasks, runs them, answers get/result/list/cancel. It knows nothing
 * of MCP's wire format; the `mcp` layer maps requests onto these calls.
 */
export class TaskEngine {
  readonly store: TaskStore;
  readonly bus: EventBus;
  readonly logger: Logger;
  /** Monitoring hooks; the layers above report their own limit refusals through it too. */
  readonly observer: EngineObserver;
  readonly ttlPolicy: TtlPolicy;
  readonly pollIntervalMs: number | null;
  private readonly pageSize: number;
  private readonly maxActivePerOwner: number;
  private readonly maxStoredPerOwner: number;
  /** The two per-owner caps' counts, read from the store only now and then (see OwnerCounts). */
  private readonly ownerCounts: OwnerCounts;
  private readonly backstopMs: number;
  /** Per-caller limits (T-SEC-4): operation rate, failed lookups. */
  private readonly limits: CallerLimits;
  /** Log the request's arguments with `created` (off: they may hold what the audit log must not). */
  private readonly auditArguments: boolean;
  private readonly now: () => number;
  private readonly execution: TaskExecution;
  private readonly sweeper: Sweeper;
  /** Cluster mode only: this process's workers and the reaper of lost leases. */
  private readonly pool: WorkerPool | null = null;
  private readonly reaper: LeaseReaper | null = null;
  /** Input requests currently out on some requestor stream served by this process. */
  private readonly inFlight = new Set<string>();
  private cursors: CursorCodec | null = null;
  private started = false;
  private closed = false;
  /** Aborted by close(): blocked `tasks/result` calls answer instead of hanging until the socket dies. */
  private readonly closing = new AbortController();
  /** Blocked `tasks/result` calls in progress, so close() can let their answers go out first. */
  private waiters = 0;
  private waitersDrained: (() => void) | null = null;

  constructor(options: EngineOptions) {
    this.store = options.store;
    this.bus = options.bus;
    this.logger = options.logger ?? silentLogger;
    this.observer = options.observer ?? silentObserver;
    this.ttlPolicy = { ...DEFAULT_TTL_POLICY, ...options.ttl };
    this.pollIntervalMs = options.pollIntervalMs === undefined ? 1000 : options.pollIntervalMs;
    this.pageSize = options.pageSize ?? 50;
    this.maxActivePerOwner = options.maxActivePerOwner ?? DEFAULT_MAX_ACTIVE_PER_OWNER;
    this.maxStoredPerOwner = options.maxStoredPerOwner ?? DEFAULT_MAX_STORED_PER_OWNER;
    this.backstopMs = options.backstopMs ?? 30_000;
    this.now = options.now ?? Date.now;
    this.ownerCounts = new OwnerCounts(this.store, { maxActive: this.maxActivePerOwner, maxStored: this.maxStoredPerOwner, now: this.now });
    this.limits = new CallerLimits(options, { now: this.now, observer: this.observer, logger: this.logger });
    this.auditArguments = options.auditArguments ?? false;
    this.execution = new TaskExecution({
      store: this.store,
      bus: this.bus,
      runner: options.runner,
      logger: this.logger,
      now: this.now,
      observer: this.observer,
      maxQueuedInputs: options.maxQueuedInputs ?? DEFAULT_MAX_QUEUED_INPUTS,
      maxResultBytes: options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
    });
    this.sweeper = new Sweeper({
      store: this.store,
      bus: this.bus,
      execution: this.execution,
      logger: this.logger,
      now: this.now,
      intervalMs: options.sweepIntervalMs ?? 1000,
      batch: options.sweepBatch ?? 500,
    });
    if (options.cluster) {
      const store = options.store;
      if (!isLeaseStore(store)) throw new Error("cluster mode needs a store with leases (PostgreSQL)");
      const deps = { store, bus: this.bus, logger: this.logger, now: this.now };
      this.pool = new WorkerPool({ ...deps, execution: this.execution }, options.cluster);
      this.reaper = new LeaseReaper({ ...deps, observer: this.observer }, options.cluster);
    }
  }

  /** True when tasks are distributed through the store to workers (cluster mode). */
  get clustered(): boolean {
    return this.pool !== null;
  }

  /** Recovers tasks a dead process left running (T-LIFE: never stuck) and starts the sweeper. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.cursors = new CursorCodec(await this.store.secret());
    if (this.pool && this.reaper) {
      // Leases, not a start-up scan, recover a cluster's interrupted work: other nodes may be
      // running tasks right now.
      this.reaper.start();
      this.pool.start();
    } else {
      const rerun = await recoverInterruptedTasks(this.store, this.bus, this.logger, this.now);
      for (const task of rerun) void this.execution.run(task);
    }
    this.sweeper.start();
  }

  /**
   * Stops the sweeper and aborts handlers still running here. Their tasks fail with a clear
   * statusMessage, except retryable ones, which stay `working` and re-run on the next start.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.sweeper.stop();
    this.pool?.stop();
    this.reaper?.stop();
    const interrupted = this.execution.abortAll("shutdown");
    for (const id of interrupted) {
      const task = await this.store.get(id, { any: true });
      if (!task) continue;
      if (task.retryable) {
        // In a cluster another worker can take it right away instead of after the lease runs out.
        if (this.pool && isLeaseStore(this.store)) {
          await this.store.release(id, this.pool.workerId).catch(() => {});
          this.bus.publish({ type: "wake", taskId: id });
        }
        continue;
      }
      const failed = await this.store.transition(id, ACTIVE_STATUSES, "failed", {
        statusMessage: "The server shut down while this task was running",
        outcome: { kind: "error", error: { code: -32603, message: "The server shut down while this task was running" } },
        now: this.now(),
      });
      if (failed) {
        this.logger.warn({ audit: "interrupted", ...taskAuditFields(failed) }, "failed a task interrupted by a shutdown");
        this.bus.publish(statusEvent(failed));
      }
    }
    // Waiters on failed tasks have been woken; the rest (retryable or other nodes' tasks) are told
    // to come back. Either way every blocked tasks/result gets an answer before the store closes.
    this.closing.abort();
    if (this.waiters > 0) {
      await Promise.race([
        new Promise<void>((resolve) => (this.waitersDrained = resolve)),
        new Promise<void>((resolve) => setTimeout(resolve, 2000).unref()),
      ]);
    }
  }

  /**
   * Creates a task in `working` (T-LIFE-1) and schedules its handler after the caller has had the
   * chance to answer with the snapshot (T-NEW-2: returned before the work runs).
   */
  async create(input: CreateTaskInput): Promise<TaskRecord> {
    this.assertOpen();
    this.limits.admit({ caller: input, method: input.method });
    const ttlMs = resolveTtl(input.ttl, this.ttlPolicy);
    // Tasks without an owner share one allowance of each: without authentication the server cannot
    // tell requestors apart, and exempting them would leave the store unbounded.
    const cap = await this.ownerCounts.reserve(input.owner);
    if (cap === "active_tasks") {
      reportLimitHit(this.observer, this.logger, { limit: "active_tasks", owner: input.owner, method: input.method, peer: input.peer ?? null });
      throw TaskError.limitExceeded("active_tasks", this.maxActivePerOwner, `Too many active tasks: at most ${this.maxActivePerOwner} per requestor`);
    }
    if (cap === "stored_tasks") {
      reportLimitHit(this.observer, this.logger, { limit: "stored_tasks", owner: input.owner, method: input.method, peer: input.peer ?? null });
      throw TaskError.limitExceeded(
        "stored_tasks",
        this.maxStoredPerOwner,
        `Too many stored tasks: at most ${this.maxStoredPerOwner} per requestor, finished ones included until their ttl runs out`,
      );
    }
    let task: TaskRecord;
    try {
      task = await this.store.create({
        id: newTaskId(),
        owner: input.owner,
        method: input.method,
        name: input.name,
        request: input.request,
        // The creator's address, for the audit lines of what happens to the task later (T-SEC-5).
        origin: input.peer === undefined ? input.origin : { ...input.origin, peer: input.peer },
        createdAt: this.now(),
        ttlMs,
        pollIntervalMs: this.pollIntervalMs,
        retryable: input.retryable ?? false,
      });
    } catch (error) {
      this.ownerCounts.settle(input.owner, false);
      throw error;
    }
    this.ownerCounts.settle(input.owner, true);
    this.logger.info(
      {
        audit: "created",
        taskId: task.id,
        owner: task.owner,
        method: task.method,
        peer: input.peer ?? null,
        name: task.name,
        ttlMs,
        ...(this.auditArguments && { request: task.request }),
      },
      "task created",
    );
    this.bus.publish(statusEvent(task, true));
    // In a cluster the created event wakes whichever worker claims it; here it runs in-process.
    if (!this.pool) setImmediate(() => void this.execution.run(task));
    return task;
  }

  /** T-GET-1; a foreign, unknown or malformed id is "not found" (T-ERR-1, T-SEC-3). */
  async get(taskId: unknown, caller: Caller): Promise<TaskRecord> {
    return this.lookup({ caller, method: "tasks/get", taskId }, () => this.read(taskId, caller.owner));
  }

  /** T-LIST: keyset pages of the owner's tasks with an opaque signed cursor. */
  async list(cursor: unknown, caller: Caller): Promise<ListPage> {
    return this.lookup({ caller, method: "tasks/list" }, () => this.page(cursor, caller.owner));
  }

  private async page(cursor: unknown, owner: string | null): Promise<ListPage> {
    const codec = this.requireCursors();
    const after = cursor === undefined || cursor === null ? null : codec.decode(cursor, owner);
    const rows = await this.store.list(owner, after, this.pageSize + 1);
    const now = this.now();
    const page = rows.slice(0, this.pageSize);
    const last = page[page.length - 1];
    // T-LIST-2: nextCursor whenever more tasks exist.
    const nextCursor = rows.length > this.pageSize && last ? codec.encode(last, owner) : undefined;
    // Expired rows not yet swept are left out: get() answers "expired" for them (T-LIST-4 holds).
    const tasks = page.filter((task) => !isExpired(task, now));
    return nextCursor ? { tasks, nextCursor } : { tasks };
  }

  /**
   * T-CANCEL: moves the task to `cancelled` before answering (T-CANCEL-3), then aborts the
   * handler wherever it runs. Terminal tasks are refused with -32602 (T-CANCEL-2).
   */
  async cancel(taskId: unknown, caller: Caller): Promise<TaskRecord> {
    const task = await this.lookup({ caller, method: "tasks/cancel", taskId }, () => this.read(taskId, caller.owner));
    if (isTerminal(task.status)) throw TaskError.terminal(task.status);
    const cancelled = await this.store.transition(task.id, allowedSources("cancelled"), "cancelled", {
      statusMessage: "Cancelled by the requestor",
      now: this.now(),
    });
    if (!cancelled) {
      // Lost a race with the task's own end: report the status that won.
      const current = await this.read(task.id, caller.owner);
      throw TaskError.terminal(current.status);
    }
    this.logger.info({ audit: "cancelled", taskId: task.id, owner: caller.owner, method: "tasks/cancel", peer: caller.peer ?? null }, "task cancelled");
    this.bus.publish(statusEvent(cancelled));
    this.bus.publish({ type: "cancel", taskId: task.id, reason: "cancelled" });
    this.execution.abort(task.id, "cancelled");
    return cancelled;
  }

  /**
   * T-RES: blocks until the task is terminal (T-RES-3), woken by events rather than by polling,
   * delivering queued input requests through `deliver` meanwhile (T-INPUT-3). Returns the terminal
   * record; its outcome is what `tasks/result` answers with (T-RES-2, T-RES-4). A {@link PlainWait}
   * caller gets {@link StreamRequiredError} instead of a delivery.
   */
  async awaitResult(taskId: unknown, caller: Caller, signal: AbortSignal, deliver: InputDelivery | PlainWait): Promise<TaskRecord> {
    // Subscribed before the first read (which also answers "not found"), so no event between a
    // read and the wait that follows it is missed.
    const id = checkTaskId(taskId);
    let task: TaskRecord;
    let wake: () => void = () => {};
    /** An `input` (or `wake`) event came since the last read: look for queued input requests. */
    let inputHint = false;
    /** The move to a terminal status, when its event carried the outcome: no read-back needed. */
    let ended: Extract<TaskEvent, { type: "status" }> | null = null;
    const stop = this.bus.onTask(id, (event) => {
      if (event.type === "input" || event.type === "wake") inputHint = true;
      if (event.type === "status" && event.outcome !== undefined && isTerminal(event.status)) ended = event;
      if (event.type === "status" || event.type === "input" || event.type === "wake") wake();
    });
    const onAbort = (): void => wake();
    signal.addEventListener("abort", onAbort);
    this.closing.signal.addEventListener("abort", onAbort);
    this.waiters++;
    let waited = false;
    try {
      for (;;) {
        const woken = new Promise<void>((resolve) => (wake = resolve));
        const hinted = inputHint;
        inputHint = false;
        // The first read is the request's lookup (limits, audit); re-reads after a wake-up are not.
        if (!waited) task = await this.lookup({ caller, method: "tasks/result", taskId: id }, () => this.read(id, caller.owner));
        else if (ended) task = endedAs(task!, ended, this.now());
        else task = await this.read(id, caller.owner);
        if (isTerminal(task.status)) {
          this.logger.info({ audit: "retrieved", taskId: id, owner: caller.owner, method: "tasks/result", peer: caller.peer ?? null }, "task result retrieved");
          if (waited) this.observer.resultWoken(task, Math.max(0, this.now() - task.updatedAt));
          return task;
        }
        if (this.closing.signal.aborted) {
          throw new TaskError("internal", "The server is shutting down; call tasks/result again once it is back");
        }
        if (typeof deliver !== "function" && deliver.needsStream(task)) throw new StreamRequiredError(task.id);
        // A handler queues its request, then moves the task to input_required, then publishes an
        // `input` event: a `working` task with no such event since has nothing queued, and the
        // store is not asked (one query less per wait).
        if (task.status === "input_required" || hinted) await this.deliverPending(task, deliver, caller);
        if (signal.aborted) throw new TaskError("internal", "The tasks/result request was abandoned");
        const timer = setTimeout(() => wake(), this.backstopDelay(task));
        await woken;
        waited = true;
        clearTimeout(timer);
      }
    } catch (error) {
      // Handed on to a path that can stream, which counts the request itself.
      if (error instanceof StreamRequiredError) this.limits.handedOn({ caller, method: "tasks/result", taskId: id });
      throw error;
    } finally {
      stop();
      signal.removeEventListener("abort", onAbort);
      this.closing.signal.removeEventListener("abort", onAbort);
      if (--this.waiters === 0) this.waitersDrained?.();
    }
  }


  /** Records the requestor's answer to an input request and wakes the handler waiting for it. */
  async answer(taskId: string, inputId: string, answer: TaskOutcome): Promise<boolean> {
    const stored = await this.store.answerInput(taskId, inputId, answer);
    if (stored) this.bus.publish({ type: "answer", taskId, inputId });
    return stored;
  }

  /** Runs the sweeper once now (tests, and operators who want an immediate cleanup). */
  sweep(): Promise<void> {
    return this.sweeper.runOnce();
  }

  private async deliverPending(task: TaskRecord, deliver: InputDelivery | PlainWait, caller: Caller): Promise<void> {
    const pending = await this.store.pendingInputs(task.id);
    for (const input of pending) {
      const key = `${task.id}\u0000${input.id}`;
      if (this.inFlight.has(key)) continue;
      if (typeof deliver !== "function") throw new StreamRequiredError(task.id);
      this.inFlight.add(key);
      this.logger.info({ audit: "input_requested", taskId: task.id, owner: task.owner, method: input.method, peer: caller.peer ?? null }, "input request delivered");
      deliver(input, task).then(
        async (answer) => {
          await this.answer(task.id, input.id, answer);
          this.logger.info({ audit: "input_answered", taskId: task.id, owner: task.owner, method: input.method, peer: caller.peer ?? null }, "input request answered");
        },
        (error: unknown) => {
          // Delivery failed (stream gone): keep it queued for the next tasks/result.
          this.logger.debug({ taskId: task.id, inputId: input.id, err: String(error) }, "input delivery failed; will redeliver");
        },
      ).finally(() => this.inFlight.delete(key));
    }
  }

  /** The task as `owner` may see it: "not found" when unknown or foreign (T-ERR-1, T-SEC-3), "expired" past its ttl (T-ERR-7). */
  private async read(taskId: unknown, owner: string | null): Promise<TaskRecord> {
    const id = checkTaskId(taskId);
    const task = await this.store.get(id, { owner });
    if (!task) throw TaskError.notFound();
    if (isExpired(task, this.now())) throw TaskError.expired();
    return task;
  }

  /**
   * Runs one lookup of a request within its caller's limits (T-SEC-4): refused while the caller
   * cools down after too many failed lookups, or over its operation rate. A failed lookup (unknown,
   * foreign or expired id, bad cursor) is audited (T-SEC-5) and counted against the caller.
   */
  private async lookup<T>(attempt: Attempt, run: () => Promise<T>): Promise<T> {
    this.limits.admitLookup(attempt);
    this.limits.admit(attempt);
    try {
      return await run();
    } catch (error) {
      if (error instanceof TaskError && (error.kind === "not_found" || error.kind === "expired" || error.kind === "bad_cursor")) {
        const { caller, method, taskId } = attempt;
        this.logger.info(
          { audit: "lookup_denied", reason: error.kind, taskId: typeof taskId === "string" ? taskId : null, owner: caller.owner, method, peer: caller.peer ?? null },
          "task lookup failed",
        );
        this.limits.lookupFailed(attempt);
      }
      throw error;
    }
  }

  private backstopDelay(task: TaskRecord): number {
    if (task.expiresAt === null) return this.backstopMs;
    return Math.max(10, Math.min(this.backstopMs, task.expiresAt - this.now() + 5));
  }

  private requireCursors(): CursorCodec {
    if (!this.cursors) throw new Error("TaskEngine.start() must be awaited before serving requests");
    return this.cursors;
  }

  private assertOpen(): void {
    if (this.closed) throw new TaskError("internal", "The server is shutting down");
    if (!this.started) throw new Error("TaskEngine.start() must be awaited before serving requests");
  }
}

/**
 * The task as its terminal transition left it, from the last read (fixed fields, ownership
 * already checked) and that transition's event (what it wrote). Expiry is judged as a read would.
 */
function endedAs(task: TaskRecord, event: Extract<TaskEvent, { type: "status" }>, now: number): TaskRecord {
  const ended: TaskRecord = { ...task, status: event.status, statusMessage: event.statusMessage, updatedAt: event.updatedAt, outcome: event.outcome ?? null };
  if (isExpired(ended, now)) throw TaskError.expired();
  return ended;
}

/** The taskId of a request, checked for shape (the store lookup decides whether it exists). */
function checkTaskId(taskId: unknown): string {
  if (typeof taskId !== "string" || taskId.length === 0 || taskId.length > 256) {
    throw TaskError.invalidParams("Invalid taskId: must be a non-empty string");
  }
  return taskId;
}
