import type { Caller } from "../../core/caller.js";
import { CursorCodec } from "../../core/cursor.js";
import { RpcCode, TaskError } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { ACTIVE_STATUSES, allowedSources, isTerminal } from "../../core/task-status.js";
import type { TaskRecord } from "../../core/task.js";
import type { EventBus } from "../../events/event-bus.js";
import { statusEvent } from "../../events/task-event.js";
import { isLeaseStore } from "../../store/lease-store.js";
import { isRunQueueStore, type ClaimCaps } from "../../store/run-queue.js";
import type { TaskStore } from "../../store/task-store.js";
import { hasWriterLock } from "../../store/writer-lock.js";
import { LeaseReaper } from "../cluster/lease-reaper.js";
import { WorkerPool } from "../cluster/worker-pool.js";
import { drainHandlers, type DrainReport } from "../drain.js";
import type { EngineObserver } from "../engine-observer.js";
import type { EngineOptions } from "../engine-options.js";
import { LocalDispatcher } from "../local-dispatch.js";
import { DEFAULT_MAX_QUEUED_INPUTS, DEFAULT_MAX_RESULT_BYTES } from "../limits/quotas.js";
import { taskAuditFields } from "../task-audit.js";
import { TaskExecution } from "../task-execution.js";
import type { TaskTracing } from "../task-tracing.js";
import { recoverInterruptedTasks } from "../upkeep/recovery.js";
import { Sweeper } from "../upkeep/sweeper.js";
import { WaitTimers } from "../upkeep/wait-timers.js";
import { isWaitStore, type WokenTask } from "../../store/wait-store.js";
import type { TaskLookups } from "./task-lookups.js";
import { DRAINING_RETRY_AFTER_MS, type TaskWaiting } from "./task-waiting.js";

interface LifecycleDeps {
  store: TaskStore;
  bus: EventBus;
  logger: Logger;
  observer: EngineObserver;
  tracing: TaskTracing;
  lookups: TaskLookups;
  waiting: TaskWaiting;
  now: () => number;
  keepFinishedMs: number;
  /** Resolves once every creation that passed the open check has settled (a drain waits for them). */
  creationsSettled(): Promise<void>;
}

/** How long an emitted event is kept for a wait that starts after it: 10 minutes (docs/limits.md). */
export const DEFAULT_EVENT_WINDOW_MS = 10 * 60 * 1000;

/** How long a swept task's id answers "expired": the default maximum ttl, so a requestor that waited as long as a task may live still learns why it is gone. */
const DEFAULT_REMEMBER_EXPIRED_MS = 24 * 60 * 60 * 1000;

/**
 * What moves tasks through their lifecycle and the engine through its own: running handlers
 * (in-process, through the single node's queue, or as a cluster's worker), the transitions they
 * end in, cancel, expiry (the sweeper), recovery at start, drain and close.
 */
export class TaskLifecycle {
  private readonly execution: TaskExecution;
  private readonly sweeper: Sweeper;
  /** Cluster mode only: this process's workers and the reaper of lost leases. */
  private readonly pool: WorkerPool | null = null;
  private readonly reaper: LeaseReaper | null = null;
  /** Single node with a queue-keeping store: starts queued tasks as slots free (see LocalDispatcher). */
  private readonly dispatcher: LocalDispatcher | null = null;
  /** Fires durable timers and event timeouts (a store that keeps waits). */
  private readonly timers: WaitTimers | null = null;
  private started = false;
  private closed = false;
  /** The drain under way or done (see drain()); new tasks are refused from its start. */
  private drained: Promise<DrainReport> | null = null;
  /** Aborted by close(): a drain still in its grace period stops waiting. */
  private readonly drainStop = new AbortController();

  constructor(
    private readonly deps: LifecycleDeps,
    options: EngineOptions,
  ) {
    const { store, bus, logger, observer, now, waiting } = deps;
    this.execution = new TaskExecution({
      store,
      bus,
      runner: options.runner,
      logger,
      now,
      observer,
      maxQueuedInputs: options.maxQueuedInputs ?? DEFAULT_MAX_QUEUED_INPUTS,
      maxResultBytes: options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES,
      awaited: (taskId) => waiting.isAwaited(taskId),
      tracing: deps.tracing,
    });
    this.sweeper = new Sweeper({
      store,
      bus,
      execution: this.execution,
      logger,
      now,
      intervalMs: options.sweepIntervalMs ?? 1000,
      batch: options.sweepBatch ?? 500,
      retention: { keepFinishedMs: deps.keepFinishedMs, rememberExpiredMs: options.rememberExpiredMs ?? DEFAULT_REMEMBER_EXPIRED_MS },
    });
    const perOwner = options.maxRunningPerOwner ?? null;
    const byName = options.concurrencyByName;
    const caps = (): ClaimCaps => ({ perOwner, perName: byName?.() ?? {} });
    if (options.cluster) {
      if (!isLeaseStore(store)) throw new Error("cluster mode needs a store with leases (PostgreSQL)");
      const clusterDeps = { store, bus, logger, now };
      this.pool = new WorkerPool({ ...clusterDeps, execution: this.execution, caps }, options.cluster);
      this.reaper = new LeaseReaper({ ...clusterDeps, observer }, options.cluster);
    } else if (isRunQueueStore(store)) {
      this.dispatcher = new LocalDispatcher(
        { store, bus, execution: this.execution, logger, now },
        { slots: options.maxRunning ?? Number.POSITIVE_INFINITY, caps },
      );
    }
    if (isWaitStore(store)) {
      this.timers = new WaitTimers({
        store,
        logger,
        now,
        woken: (tasks) => this.woken(tasks, "timer"),
        eventWindowMs: options.eventWindowMs ?? DEFAULT_EVENT_WINDOW_MS,
      });
    }
    this.execution.useWaitHooks({
      slots: this.dispatcher?.slots ?? this.pool?.slots ?? null,
      registered: (dueAt) => this.timers?.soon(dueAt),
      requeued: (taskId) => bus.publish({ type: "wake", taskId }),
    });
  }

  /**
   * Tasks whose waits were satisfied: each handler waiting here or on another node hears its
   * `wake`; a parked one, queued again, is claimed by whichever node hears it first.
   */
  woken(tasks: readonly WokenTask[], reason: "event" | "timer"): void {
    for (const { taskId } of tasks) this.deps.bus.publish({ type: "wake", taskId });
    this.deps.observer.waitsWoken?.(reason, tasks.length);
  }

  /** True when tasks are distributed through the store to workers (cluster mode). */
  get clustered(): boolean {
    return this.pool !== null;
  }

  /** True from the moment {@link drain} is called: new tasks are refused, running ones finish or are handed back. */
  get draining(): boolean {
    return this.drained !== null;
  }

  /** Throws unless a new task may be created now: started, not closed, not draining. */
  admitNew(): void {
    this.assertOpen();
    // Retryable: another node (or this one's successor) takes the same request.
    if (this.drained) throw TaskError.draining(DRAINING_RETRY_AFTER_MS, this.clustered);
  }

  /** Throws unless events may be emitted now: started and not closed (a draining node still takes them). */
  admitEvents(): void {
    this.assertOpen();
  }

  /**
   * Starts a stored task's handler after the caller has had the chance to answer with the
   * snapshot (T-NEW-2). In a cluster the created event wakes whichever worker claims it; here it
   * runs in-process, through the queue when the store keeps one.
   */
  schedule(task: TaskRecord): void {
    if (this.dispatcher) setImmediate(() => this.dispatcher?.kick());
    else if (!this.pool) setImmediate(() => void this.execution.run(task));
  }

  /**
   * Recovers tasks a dead process left running (T-LIFE: never stuck) and starts the sweeper. On a
   * single node it first takes the store's writer lock where the store has one (SQLite): recovery
   * treats every active task as interrupted, which is only true when no other server uses the file.
   * @throws StoreInUseError when another server holds the lock (nothing was touched).
   */
  async start(): Promise<void> {
    if (this.started) return;
    const { store, bus, logger, now, lookups } = this.deps;
    if (!this.pool && hasWriterLock(store)) await store.acquireWriterLock();
    this.started = true;
    lookups.open(new CursorCodec(await store.secret()));
    if (this.pool && this.reaper) {
      // Leases, not a start-up scan, recover a cluster's interrupted work: other nodes may be
      // running tasks right now.
      this.reaper.start();
      this.pool.start();
    } else {
      const rerun = await recoverInterruptedTasks(store, bus, logger, now);
      for (const task of rerun) {
        if (this.dispatcher) this.dispatcher.adopt(task);
        else void this.execution.run(task);
      }
      // Queued tasks were left alone by recovery: they start now, as slots allow.
      this.dispatcher?.start();
    }
    this.sweeper.start();
    this.timers?.start();
  }

  /**
   * Drains this process before it stops (a deploy, a restart): from now on new tasks are refused
   * with a retryable error (-32003, `data.reason` "draining") and a cluster worker claims nothing
   * more; handlers already running get `graceMs` to finish as usual. Those still running then are
   * aborted with reason "drain" and handed back, never failed: in a cluster queued again for
   * another worker at once, on a single node left active in the store for the next start's
   * recovery. Reading and cancelling tasks keeps working until {@link close}, which should
   * follow. Calling it again returns the same drain.
   */
  drain(graceMs: number): Promise<DrainReport> {
    this.drained ??= this.runDrain(graceMs);
    return this.drained;
  }

  private async runDrain(graceMs: number): Promise<DrainReport> {
    if (!this.started || this.closed) return { finished: [], handedBack: [] };
    const { store, bus, logger, now } = this.deps;
    const runningAtStart = this.execution.runningIds();
    // A creation that passed the open check before the drain began still runs its task here: the
    // dispatcher's last claim starts it (within the slots and caps). What is left stays queued in
    // the store for the next start; nothing more starts here.
    await this.deps.creationsSettled();
    await new Promise((resolve) => setImmediate(resolve));
    await this.dispatcher?.stopAfterLastClaim();
    return drainHandlers(
      {
        execution: this.execution,
        cluster: this.pool && isLeaseStore(store) ? { pool: this.pool, store } : null,
        store,
        bus,
        logger,
        now,
      },
      graceMs,
      this.drainStop.signal,
      runningAtStart,
    );
  }

  /**
   * Stops the sweeper and aborts handlers still running here (none after a {@link drain}). Their
   * tasks fail with a clear statusMessage, except retryable ones, which stay `working` and re-run
   * on the next start.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    const { store, bus, logger, now, waiting } = this.deps;
    this.closed = true;
    // A drain in its grace period ends it now and hands its tasks back before anything is failed.
    this.drainStop.abort();
    await this.drained;
    this.sweeper.stop();
    this.timers?.stop();
    this.dispatcher?.stop();
    await this.pool?.stop();
    this.reaper?.stop();
    const interrupted = this.execution.abortAll("shutdown");
    // Read now, while the runs are still registered: a worker fails a task only under its claim,
    // so a task whose lease it lost (another worker runs it now) is left alone.
    const claims = new Map(interrupted.map((id) => [id, this.execution.claimOf(id)]));
    for (const id of interrupted) {
      const task = await store.get(id, { any: true });
      if (!task) continue;
      if (task.retryable) {
        // In a cluster another worker can take it right away instead of after the lease runs out.
        // Not one waiting in input_required: claims take only working tasks, so it would sit
        // unleased and unclaimed; the reaper re-queues it once the lease runs out.
        const claim = claims.get(id);
        if (this.pool && isLeaseStore(store) && task.status === "working" && claim !== undefined) {
          await store.release(id, claim).catch(() => {});
          bus.publish({ type: "wake", taskId: id });
        }
        continue;
      }
      const failed = await store.transition(id, ACTIVE_STATUSES, "failed", {
        statusMessage: "The server shut down while this task was running",
        outcome: { kind: "error", error: { code: RpcCode.InternalError, message: "The server shut down while this task was running" } },
        now: now(),
        ...(claims.get(id) && { claim: claims.get(id) }),
      });
      if (failed) {
        logger.warn({ audit: "interrupted", ...taskAuditFields(failed) }, "failed a task interrupted by a shutdown");
        bus.publish(statusEvent(failed));
      }
    }
    // Waiters on failed tasks have been woken; the rest (retryable or other nodes' tasks) are told
    // to come back. Either way every blocked wait gets an answer before the store closes, and the
    // marks of the answers that went out are written.
    await waiting.close();
  }

  /**
   * T-CANCEL: moves the task to `cancelled` before answering (T-CANCEL-3), then aborts the
   * handler wherever it runs. Terminal tasks are refused with -32602 (T-CANCEL-2).
   * `statusMessage` says who cancelled (default: the requestor).
   */
  async cancel(taskId: unknown, caller: Caller, options: { statusMessage?: string } = {}): Promise<TaskRecord> {
    const { store, bus, logger, tracing, lookups, now } = this.deps;
    const task = await lookups.lookup({ caller, operation: "cancel", taskId }, () => lookups.read(taskId, caller.owner));
    if (isTerminal(task.status)) throw TaskError.terminal(task.status);
    const cancelled = await store.transition(task.id, allowedSources("cancelled"), "cancelled", {
      statusMessage: options.statusMessage ?? "Cancelled by the requestor",
      now: now(),
    });
    if (!cancelled) {
      // Lost a race with the task's own end: report the status that won.
      const current = await lookups.read(task.id, caller.owner);
      throw TaskError.terminal(current.status);
    }
    // The request's span says the status the cancel left, not the one it found.
    tracing.taskRead(cancelled);
    logger.info(
      { audit: "cancelled", taskId: task.id, owner: caller.owner, operation: "cancel", peer: caller.peer ?? null },
      "task cancelled",
    );
    bus.publish(statusEvent(cancelled));
    bus.publish({ type: "cancel", taskId: task.id, reason: "cancelled" });
    this.execution.abort(task.id, "cancelled");
    return cancelled;
  }

  /** Runs the sweeper once now (tests, and operators who want an immediate cleanup). */
  sweep(): Promise<void> {
    return this.sweeper.runOnce();
  }

  private assertOpen(): void {
    if (this.closed) throw new TaskError("internal", "The server is shutting down");
    if (!this.started) throw new Error("TaskEngine.start() must be awaited before serving requests");
  }
}
