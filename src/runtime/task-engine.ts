import { CursorCodec } from "../core/cursor.js";
import { checkedAnswer } from "../core/form-answer.js";
import type { Caller } from "../core/caller.js";
import { RpcCode, TaskError } from "../core/errors.js";
import { newTaskId } from "../core/task-id.js";
import { ACTIVE_STATUSES, allowedSources, isTerminal } from "../core/task-status.js";
import { isExpired, type InputRequest, type NewTask, type TaskOrigin, type TaskOutcome, type TaskRecord } from "../core/task.js";
import { DEFAULT_TTL_POLICY, resolveTtl, type TtlPolicy } from "../core/ttl-policy.js";
import type { EventBus } from "../events/event-bus.js";
import { isLeaseStore } from "../store/lease-store.js";
import type { TaskStore } from "../store/task-store.js";
import type { EngineOptions } from "./engine-options.js";
import { silentObserver, type EngineObserver } from "./engine-observer.js";
import { silentLogger, type Logger } from "../core/logger.js";
import { CallerLimits, type Attempt } from "./limits/caller-limits.js";
import type { EngineOperation } from "./engine-operation.js";
import { recoverInterruptedTasks } from "./upkeep/recovery.js";
import { OwnerCounts } from "./limits/owner-counts.js";
import { taskAuditFields } from "./task-audit.js";
import { Sweeper } from "./upkeep/sweeper.js";
import { LeaseReaper } from "./cluster/lease-reaper.js";
import { storageCondition } from "../core/storage-condition.js";
import {
  DEFAULT_MAX_ACTIVE_PER_OWNER,
  DEFAULT_MAX_QUEUED_INPUTS,
  DEFAULT_MAX_RESULT_BYTES,
  DEFAULT_MAX_STORED_PER_OWNER,
  reportLimitHit,
} from "./limits/quotas.js";
import { WorkerPool } from "./cluster/worker-pool.js";
import { TaskExecution } from "./task-execution.js";
import type { RecoveryPolicy } from "./recovery-policy.js";
import { createdEvent, statusEvent, type TaskEvent } from "../events/task-event.js";
import { notifyWith, publishAfterWrite } from "./carried-notify.js";
import { FetchedMarkWriter } from "./fetched-mark-writer.js";
import { AwaitedTasks } from "./awaited-tasks.js";
import { drainHandlers, type DrainReport } from "./drain.js";
import { hasWriterLock } from "../store/writer-lock.js";
import { taskReadPort, type TaskReadPort } from "./task-read-port.js";
import { isDerivedKey, keyConflict, requestorKeyOf, type TaskKey } from "../core/idempotency.js";
import { isQueueView, isRunQueueStore, type ClaimCaps } from "../store/run-queue.js";
import { LocalDispatcher } from "./local-dispatch.js";
import { untraced, type TaskTracing } from "./task-tracing.js";

/** What a binding passes to create a task: who asks (the owner it is bound to, the peer), and what. */
export interface CreateTaskInput extends Caller {
  method: string;
  name: string;
  request: unknown;
  origin: TaskOrigin;
  /** The raw requested ttl (validated here). */
  ttl: unknown;
  /** Compatibility alias of `recovery: "retry"` (when no `recovery` is given). */
  retryable?: boolean;
  /** How the task is recovered when its process dies (docs/durable-execution.md). Default "fail". */
  recovery?: RecoveryPolicy;
}

/**
 * One step of {@link TaskEngine.watch}: the task as it is now, and why it was read again.
 */
export interface TaskChange {
  task: TaskRecord;
  /** False for the first read (the request's own lookup); true for every read after a wake-up. */
  woken: boolean;
  /**
   * An event said the task's questions may have changed since the previous step (one was queued,
   * or another node asked for a look): an era that delivers questions should look at
   * {@link TaskEngine.pendingInputs}. A task in `input_required` always may have some.
   */
  inputsMayHaveChanged: boolean;
}

/** What {@link TaskEngine.createKeyed} did: created the task, or found the one the key names. */
export interface KeyedTask {
  task: TaskRecord;
  /** False when the key already named this task (nothing created, nothing run). */
  created: boolean;
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
  private readonly tracing: TaskTracing;
  readonly ttlPolicy: TtlPolicy;
  readonly pollIntervalMs: number | null;
  private readonly pageSize: number;
  private readonly maxActivePerOwner: number;
  private readonly maxStoredPerOwner: number;
  /** Whether a cap can hold a created task back (then reads say where it waits). */
  private readonly mayQueue: () => boolean;
  /** The two per-owner caps' counts, read from the store only now and then (see OwnerCounts). */
  private readonly ownerCounts: OwnerCounts;
  private readonly backstopMs: number;
  private readonly keepFinishedMs: number;
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
  /** Single node with a queue-keeping store: starts queued tasks as slots free (see LocalDispatcher). */
  private readonly dispatcher: LocalDispatcher | null = null;
  private readonly maxQueuedPerOwner: number | null;
  private cursors: CursorCodec | null = null;
  private started = false;
  private closed = false;
  /** Aborted by close(): blocked waits for an outcome answer instead of hanging until the socket dies. */
  private readonly closing = new AbortController();
  /** Watches in progress, so close() can let their answers go out first. */
  private waiters = 0;
  private waitersDrained: (() => void) | null = null;
  /** The drain under way or done (see drain()); new tasks are refused from its start. */
  private drained: Promise<DrainReport> | null = null;
  /** Aborted by close(): a drain still in its grace period stops waiting. */
  private readonly drainStop = new AbortController();
  /** Creations past the open check whose task may not be stored yet: a drain waits for them. */
  private readonly creating = new Set<Promise<unknown>>();
  /** Marks of fetched results, held briefly and written together; one fetched again writes nothing. */
  private readonly fetchedMarks: FetchedMarkWriter;
  /** Tasks a request of this process follows ({@link watch}): their status writes commit at once. */
  private readonly awaited = new AwaitedTasks();

  constructor(options: EngineOptions) {
    this.store = options.store;
    this.bus = options.bus;
    this.logger = options.logger ?? silentLogger;
    this.fetchedMarks = new FetchedMarkWriter(this.store, this.logger);
    this.observer = options.observer ?? silentObserver;
    this.tracing = options.tracing ?? untraced;
    this.ttlPolicy = { ...DEFAULT_TTL_POLICY, ...options.ttl };
    this.pollIntervalMs = options.pollIntervalMs === undefined ? 1000 : options.pollIntervalMs;
    this.pageSize = options.pageSize ?? 50;
    this.maxActivePerOwner = options.maxActivePerOwner ?? DEFAULT_MAX_ACTIVE_PER_OWNER;
    this.maxStoredPerOwner = options.maxStoredPerOwner ?? DEFAULT_MAX_STORED_PER_OWNER;
    this.backstopMs = options.backstopMs ?? 30_000;
    this.keepFinishedMs = options.keepFinishedMs ?? 0;
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
      awaited: (taskId) => this.awaited.has(taskId),
    });
    this.sweeper = new Sweeper({
      store: this.store,
      bus: this.bus,
      execution: this.execution,
      logger: this.logger,
      now: this.now,
      intervalMs: options.sweepIntervalMs ?? 1000,
      batch: options.sweepBatch ?? 500,
      retention: { keepFinishedMs: this.keepFinishedMs, rememberExpiredMs: options.rememberExpiredMs ?? DEFAULT_REMEMBER_EXPIRED_MS },
    });
    this.maxQueuedPerOwner = options.maxQueuedPerOwner ?? null;
    const perOwner = options.maxRunningPerOwner ?? null;
    const byName = options.concurrencyByName;
    const caps = (): ClaimCaps => ({ perOwner, perName: byName?.() ?? {} });
    // A queued task is only held back by a cap: without one (an unbounded single node) it starts
    // within the turn, and a "queued" message would be noise on nearly every first read.
    this.mayQueue = () => options.cluster !== undefined || options.maxRunning !== undefined || perOwner !== null || Object.keys(byName?.() ?? {}).length > 0;
    if (options.cluster) {
      const store = options.store;
      if (!isLeaseStore(store)) throw new Error("cluster mode needs a store with leases (PostgreSQL)");
      const deps = { store, bus: this.bus, logger: this.logger, now: this.now };
      this.pool = new WorkerPool({ ...deps, execution: this.execution, caps }, options.cluster);
      this.reaper = new LeaseReaper({ ...deps, observer: this.observer }, options.cluster);
    } else if (isRunQueueStore(options.store)) {
      this.dispatcher = new LocalDispatcher(
        { store: options.store, bus: this.bus, execution: this.execution, logger: this.logger, now: this.now },
        { slots: options.maxRunning ?? Number.POSITIVE_INFINITY, caps },
      );
    }
    this.inspect = taskReadPort(this.store, this.pool !== null, this.keepFinishedMs);
  }

  /** True when tasks are distributed through the store to workers (cluster mode). */
  get clustered(): boolean {
    return this.pool !== null;
  }

  /** True from the moment {@link drain} is called: new tasks are refused, running ones finish or are handed back. */
  get draining(): boolean {
    return this.drained !== null;
  }

  /**
   * Recovers tasks a dead process left running (T-LIFE: never stuck) and starts the sweeper. On a
   * single node it first takes the store's writer lock where the store has one (SQLite): recovery
   * treats every active task as interrupted, which is only true when no other server uses the file.
   * @throws StoreInUseError when another server holds the lock (nothing was touched).
   */
  async start(): Promise<void> {
    if (this.started) return;
    if (!this.pool && hasWriterLock(this.store)) await this.store.acquireWriterLock();
    this.started = true;
    this.cursors = new CursorCodec(await this.store.secret());
    if (this.pool && this.reaper) {
      // Leases, not a start-up scan, recover a cluster's interrupted work: other nodes may be
      // running tasks right now.
      this.reaper.start();
      this.pool.start();
    } else {
      const rerun = await recoverInterruptedTasks(this.store, this.bus, this.logger, this.now);
      for (const task of rerun) {
        if (this.dispatcher) this.dispatcher.adopt(task);
        else void this.execution.run(task);
      }
      // Queued tasks were left alone by recovery: they start now, as slots allow.
      this.dispatcher?.start();
    }
    this.sweeper.start();
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
    const runningAtStart = this.execution.runningIds();
    // A creation that passed the open check before the drain began still runs its task here: the
    // dispatcher's last claim starts it (within the slots and caps). What is left stays queued in
    // the store for the next start; nothing more starts here.
    while (this.creating.size > 0) await Promise.allSettled([...this.creating]);
    await new Promise((resolve) => setImmediate(resolve));
    await this.dispatcher?.stopAfterLastClaim();
    return drainHandlers(
      {
        execution: this.execution,
        cluster: this.pool && isLeaseStore(this.store) ? { pool: this.pool, store: this.store } : null,
        store: this.store,
        bus: this.bus,
        logger: this.logger,
        now: this.now,
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
    this.closed = true;
    // A drain in its grace period ends it now and hands its tasks back before anything is failed.
    this.drainStop.abort();
    await this.drained;
    this.sweeper.stop();
    this.dispatcher?.stop();
    await this.pool?.stop();
    this.reaper?.stop();
    const interrupted = this.execution.abortAll("shutdown");
    // Read now, while the runs are still registered: a worker fails a task only under its claim,
    // so a task whose lease it lost (another worker runs it now) is left alone.
    const claims = new Map(interrupted.map((id) => [id, this.execution.claimOf(id)]));
    for (const id of interrupted) {
      const task = await this.store.get(id, { any: true });
      if (!task) continue;
      if (task.retryable) {
        // In a cluster another worker can take it right away instead of after the lease runs out.
        // Not one waiting in input_required: claims take only working tasks, so it would sit
        // unleased and unclaimed; the reaper re-queues it once the lease runs out.
        const claim = claims.get(id);
        if (this.pool && isLeaseStore(this.store) && task.status === "working" && claim !== undefined) {
          await this.store.release(id, claim).catch(() => {});
          this.bus.publish({ type: "wake", taskId: id });
        }
        continue;
      }
      const failed = await this.store.transition(id, ACTIVE_STATUSES, "failed", {
        statusMessage: "The server shut down while this task was running",
        outcome: { kind: "error", error: { code: RpcCode.InternalError, message: "The server shut down while this task was running" } },
        now: this.now(),
        ...(claims.get(id) && { claim: claims.get(id) }),
      });
      if (failed) {
        this.logger.warn({ audit: "interrupted", ...taskAuditFields(failed) }, "failed a task interrupted by a shutdown");
        this.bus.publish(statusEvent(failed));
      }
    }
    // Waiters on failed tasks have been woken; the rest (retryable or other nodes' tasks) are told
    // to come back. Either way every blocked wait gets an answer before the store closes.
    this.closing.abort();
    if (this.waiters > 0) {
      await Promise.race([
        new Promise<void>((resolve) => (this.waitersDrained = resolve)),
        new Promise<void>((resolve) => setTimeout(resolve, 2000).unref()),
      ]);
    }
    // The answers are out: their marks are written before the store can close.
    await this.fetchedMarks.flush();
  }

  /**
   * Creates a task in `working` (T-LIFE-1) and schedules its handler after the caller has had the
   * chance to answer with the snapshot (T-NEW-2: returned before the work runs).
   */
  async create(input: CreateTaskInput): Promise<TaskRecord> {
    return (await this.creation(input, null)).task;
  }

  /**
   * {@link create} under an idempotency key (SEP-3182): the first creation with the caller's key
   * stores and runs the task; every later one with an equivalent call (the same fingerprint) gets
   * that task back as it is now, created and run nothing. Uniqueness is the store's, so this holds
   * across the nodes of a cluster and across restarts. A different call under the same key is a
   * conflict (-32602, nothing run). A key whose task has expired names nothing any more: the call
   * is new. A key the server derived (a keyless retry of an idempotent tool) names its task only
   * while it runs: once the task has ended the next identical call is new.
   */
  async createKeyed(input: CreateTaskInput, key: TaskKey): Promise<KeyedTask> {
    return this.creation(input, key);
  }

  private async creation(input: CreateTaskInput, key: TaskKey | null): Promise<KeyedTask> {
    this.assertOpen();
    // Retryable: another node (or this one's successor) takes the same request.
    if (this.drained) throw TaskError.draining(DRAINING_RETRY_AFTER_MS, this.clustered);
    const creating = this.createTask(input, key);
    this.creating.add(creating);
    try {
      return await creating;
    } finally {
      this.creating.delete(creating);
    }
  }

  private async createTask(input: CreateTaskInput, key: TaskKey | null): Promise<KeyedTask> {
    this.limits.admit({ caller: input, operation: "create" });
    // A retry of a keyed creation asks for a task that already exists: the caps bound new tasks,
    // so a caller at its cap still gets its task back instead of a refusal.
    if (key !== null) {
      const known = await this.knownKey(input.owner, input.name, key);
      if (known) return known;
    }
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
    await this.admitQueued(input);
    const recovery: RecoveryPolicy = input.recovery ?? (input.retryable ? "retry" : "fail");
    const origin = input.peer === undefined ? input.origin : { ...input.origin, peer: input.peer };
    let task: TaskRecord;
    const createdAt = this.now();
    const fresh: NewTask = {
      id: newTaskId(createdAt),
      owner: input.owner,
      method: input.method,
      name: input.name,
      request: input.request,
      // The creator's address, for the audit lines of what happens to the task later (T-SEC-5).
      origin: recovery === "resume" ? { ...origin, recovery: "resume" } : origin,
      createdAt,
      ttlMs,
      pollIntervalMs: this.pollIntervalMs,
      retryable: recovery !== "fail",
    };
    // In a cluster on PostgreSQL the creation's NOTIFY (waking the workers) goes with the insert.
    const notify = notifyWith(this.store, this.bus, createdEvent(fresh));
    try {
      if (key === null) {
        task = await this.store.create(fresh, notify);
      } else {
        const keyed = await this.storeKeyed(fresh, key, notify);
        if (!keyed.created) {
          this.ownerCounts.settle(input.owner, false);
          return keyed;
        }
        task = keyed.task;
      }
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
    publishAfterWrite(this.bus, statusEvent(task, true), notify);
    // In a cluster the created event wakes whichever worker claims it; here it runs in-process,
    // through the queue when the store keeps one.
    if (this.dispatcher) setImmediate(() => this.dispatcher?.kick());
    else if (!this.pool) setImmediate(() => void this.execution.run(task));
    return { task, created: true };
  }

  /**
   * The live task `key` already names, answered without writing anything; null when the key
   * names nothing or a task it no longer names (left to {@link storeKeyed} to let go). A different
   * call under the key is the conflict, here as there.
   */
  private async knownKey(owner: string | null, name: string, key: TaskKey): Promise<KeyedTask | null> {
    const found = await this.store.findKey(owner, key.key);
    if (!found) return null;
    const { task, fingerprint } = found;
    if (isExpired(task, this.now(), this.keepFinishedMs) || (isDerivedKey(key) && isTerminal(task.status))) return null;
    if (fingerprint !== key.fingerprint) {
      this.logger.info({ audit: "key_conflict", owner, name, taskId: task.id }, "idempotency key reused for another call");
      throw keyConflict(requestorKeyOf(key));
    }
    this.logger.info({ audit: "deduplicated", owner, name, taskId: task.id, status: task.status }, "creation answered with the task its key names");
    return { task, created: false };
  }

  /**
   * Stores `fresh` under `key`, or finds the live task the key already names. A key naming a task it should no longer name (expired; or derived, and
   * the task ended) is let go and claimed again, so a few rounds at most.
   */
  private async storeKeyed(fresh: NewTask, key: TaskKey, notify: ReturnType<typeof notifyWith>): Promise<KeyedTask> {
    for (let round = 0; round < 3; round++) {
      const outcome = await this.store.createKeyed(fresh, key, notify);
      if (outcome.created) return outcome;
      const { task, fingerprint } = outcome;
      const stale = isExpired(task, this.now(), this.keepFinishedMs) || (isDerivedKey(key) && isTerminal(task.status));
      if (stale) {
        await this.store.releaseKey(fresh.owner, key.key, task.id);
        continue;
      }
      if (fingerprint !== key.fingerprint) {
        this.logger.info({ audit: "key_conflict", owner: fresh.owner, name: fresh.name, taskId: task.id }, "idempotency key reused for another call");
        throw keyConflict(requestorKeyOf(key));
      }
      this.logger.info({ audit: "deduplicated", owner: fresh.owner, name: fresh.name, taskId: task.id, status: task.status }, "creation answered with the task its key names");
      return { task, created: false };
    }
    throw TaskError.internal();
  }

  /**
   * The bounded queue: with `maxQueuedPerOwner`, a creation while the owner already has that many
   * tasks waiting for a handler is refused at once, nothing stored. Retryable: the queue drains as
   * handlers end.
   */
  private async admitQueued(input: CreateTaskInput): Promise<void> {
    const max = this.maxQueuedPerOwner;
    if (max === null || !isQueueView(this.store)) return;
    if ((await this.store.countQueued(input.owner)) < max) return;
    this.ownerCounts.settle(input.owner, false);
    reportLimitHit(this.observer, this.logger, { limit: "queued_tasks", owner: input.owner, method: input.method, peer: input.peer ?? null });
    throw TaskError.limitExceeded("queued_tasks", max, `Too many queued tasks: at most ${max} per requestor may wait for a handler; retry later`, {
      data: { retryAfterMs: QUEUED_RETRY_AFTER_MS },
    });
  }

  /**
   * The task as a get answers it: a task still waiting in the queue says so in its statusMessage,
   * computed now ("queued (3 ahead)": tasks of the same owner that start before it), never stored.
   */
  private async withQueuePosition(task: TaskRecord): Promise<TaskRecord> {
    if (task.status !== "working" || !isQueueView(this.store) || !this.mayQueue()) return task;
    const ahead = await this.store.queuedAhead(task.id);
    return ahead === null ? task : { ...task, statusMessage: `queued (${ahead} ahead)` };
  }

  /** T-GET-1; a foreign, unknown or malformed id is "not found" (T-ERR-1, T-SEC-3). */
  async get(taskId: unknown, caller: Caller): Promise<TaskRecord> {
    return this.lookup({ caller, operation: "get", taskId }, async () => this.withQueuePosition(await this.read(taskId, caller.owner)));
  }

  /** T-LIST: keyset pages of the owner's tasks with an opaque signed cursor; a queued task's statusMessage as {@link get} gives it. */
  async list(cursor: unknown, caller: Caller): Promise<ListPage> {
    return this.lookup({ caller, operation: "list" }, () => this.page(cursor, caller.owner));
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
    // A task still waiting in the queue says so as a get says it ("queued (n ahead)"), one at a time.
    const tasks: TaskRecord[] = [];
    for (const task of page) if (!isExpired(task, now, this.keepFinishedMs)) tasks.push(await this.withQueuePosition(task));
    return nextCursor ? { tasks, nextCursor } : { tasks };
  }

  /**
   * T-CANCEL: moves the task to `cancelled` before answering (T-CANCEL-3), then aborts the
   * handler wherever it runs. Terminal tasks are refused with -32602 (T-CANCEL-2).
   * `statusMessage` says who cancelled (default: the requestor).
   */
  async cancel(taskId: unknown, caller: Caller, options: { statusMessage?: string } = {}): Promise<TaskRecord> {
    const task = await this.lookup({ caller, operation: "cancel", taskId }, () => this.read(taskId, caller.owner));
    if (isTerminal(task.status)) throw TaskError.terminal(task.status);
    const cancelled = await this.store.transition(task.id, allowedSources("cancelled"), "cancelled", {
      statusMessage: options.statusMessage ?? "Cancelled by the requestor",
      now: this.now(),
    });
    if (!cancelled) {
      // Lost a race with the task's own end: report the status that won.
      const current = await this.read(task.id, caller.owner);
      throw TaskError.terminal(current.status);
    }
    // The request's span says the status the cancel left, not the one it found.
    this.tracing.taskRead(cancelled);
    this.logger.info({ audit: "cancelled", taskId: task.id, owner: caller.owner, operation: "cancel", peer: caller.peer ?? null }, "task cancelled");
    this.bus.publish(statusEvent(cancelled));
    this.bus.publish({ type: "cancel", taskId: task.id, reason: "cancelled" });
    this.execution.abort(task.id, "cancelled");
    return cancelled;
  }

  /**
   * Follows a task until it ends (T-RES-3): yields it at once, then again whenever an event says
   * it changed (woken by events, not by polling; a long backstop re-reads in case one was lost),
   * the last time in its terminal status. The first read is the request's lookup: limits, audit,
   * "not found" for an unknown or foreign id (T-SEC-3). Ends with an error when `signal` aborts or
   * the engine closes, so a waiter always gets an answer.
   */
  async *watch(taskId: unknown, caller: Caller, signal: AbortSignal, operation: EngineOperation = "watch"): AsyncGenerator<TaskChange, void, undefined> {
    // Subscribed before the first read, so no event between a read and the wait after it is missed.
    const id = checkTaskId(taskId);
    let wake: () => void = () => {};
    /** An `input` (or `wake`) event came since the last read. */
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
    /** Counted in {@link awaited} (from the lookup on, for a task still running). */
    let awaiting = false;
    try {
      // Each wake-up promise is armed before the read it follows, so an event during a read is not lost.
      const arm = (): Promise<void> => new Promise<void>((resolve) => (wake = resolve));
      const takeHint = (): boolean => {
        const hinted = inputHint;
        inputHint = false;
        return hinted;
      };
      let woke = arm();
      let hinted = takeHint();
      let task = await this.lookup({ caller, operation, taskId: id }, () => this.reread(id, caller.owner, signal));
      if (!isTerminal(task.status)) {
        this.awaited.enter(id);
        awaiting = true;
      }
      let woken = false;
      for (;;) {
        yield { task, woken, inputsMayHaveChanged: hinted || task.status === "input_required" };
        if (isTerminal(task.status)) return;
        // Retryable, as a drain's refusal of new work is: the task goes on (handed back, or re-run at the next start).
        if (this.closing.signal.aborted) {
          throw new TaskError("unavailable", "The server is shutting down; ask again once it is back", { data: { reason: "draining", retryAfterMs: DRAINING_RETRY_AFTER_MS } });
        }
        if (signal.aborted) throw new TaskError("internal", "The request was abandoned");
        // Anything that happened while the consumer looked at the last step has already woken us.
        // Nothing is due at the ttl: a task running then reads as it is until the sweeper fails
        // it, and that failure is an event like any end.
        const timer = setTimeout(() => wake(), this.backstopMs);
        await woke;
        clearTimeout(timer);
        woke = arm();
        hinted = takeHint();
        // Read again before judging a close or an abort: the task may have ended meanwhile (a close
        // fails its own running tasks first), and then its waiter gets the outcome.
        task = ended ? endedAs(task, ended, this.now(), this.keepFinishedMs) : await this.reread(id, caller.owner, signal);
        woken = true;
      }
    } finally {
      stop();
      if (awaiting) this.awaited.leave(id);
      signal.removeEventListener("abort", onAbort);
      this.closing.signal.removeEventListener("abort", onAbort);
      if (--this.waiters === 0) this.waitersDrained?.();
    }
  }

  /**
   * Waits until the task is terminal (T-RES-3) and returns it; its outcome is the result request's
   * answer (T-RES-2, T-RES-4). `onChange` sees every step before that (an era delivers the task's
   * questions from it, T-INPUT-3); whatever it throws ends the wait with that error.
   */
  async awaitOutcome(taskId: unknown, caller: Caller, signal: AbortSignal, onChange?: (change: TaskChange) => void | Promise<void>): Promise<TaskRecord> {
    let waiting = false;
    try {
      for await (const change of this.watch(taskId, caller, signal, "result")) {
        const { task } = change;
        if (isTerminal(task.status)) {
          this.logger.info({ audit: "retrieved", taskId: task.id, owner: caller.owner, operation: "result", peer: caller.peer ?? null }, "task result retrieved");
          this.delivered(task);
          if (change.woken) this.observer.resultWoken(task, Math.max(0, this.now() - task.updatedAt));
          return task;
        }
        if (!waiting) {
          waiting = true;
          this.observer.resultsWaiting?.(1);
        }
        await onChange?.(change);
      }
      // watch() returns only after yielding a terminal task, and otherwise throws.
      throw TaskError.internal();
    } finally {
      if (waiting) this.observer.resultsWaiting?.(-1);
    }
  }

  /**
   * Records that a finished task's result went to its requestor (a result request's answer, or a
   * read that carries the result), so its retention's end is not counted as a result expired
   * unread. Best effort: the answer does not wait for the write, nor fail with it.
   */
  delivered(task: TaskRecord): void {
    if (isTerminal(task.status)) this.fetchedMarks.fetched(task.id, this.now());
  }

  /**
   * A wait that ends unanswered here because another path of the binding answers the same request
   * (which counts it again): gives back its operation token, so one request counts once.
   */
  handedOn(taskId: string, caller: Caller): void {
    this.limits.handedOn({ caller, operation: "result", taskId });
  }

  /**
   * The questions a task has asked its requestor that are still unanswered, oldest first: "not
   * found" for a task the caller may not see (T-SEC-3), like every lookup.
   */
  async pendingInputs(taskId: unknown, caller: Caller): Promise<InputRequest[]> {
    const task = await this.read(taskId, caller.owner);
    return this.store.pendingInputs(task.id);
  }

  /** Audits that one of a task's questions was put to its requestor (T-SEC-5). */
  inputDelivered(task: TaskRecord, input: InputRequest, caller: Caller): void {
    this.logger.info({ audit: "input_requested", taskId: task.id, owner: task.owner, method: input.method, peer: caller.peer ?? null }, "input request delivered");
  }

  /**
   * Records the requestor's answer to one of a task's questions and wakes the handler waiting for
   * it. Owner-checked like a lookup; false when the question is unknown or already answered (the
   * first answer wins), so a late or repeated answer changes nothing. Every path that answers a
   * question comes here, so here the answer to a form is checked against the question's
   * `requestedSchema`: one that does not fit is refused (-32602 naming the field) and the
   * question stays open.
   */
  async respond(taskId: unknown, caller: Caller, inputId: string, answer: TaskOutcome): Promise<boolean> {
    const task = await this.read(taskId, caller.owner);
    const input = (await this.store.pendingInputs(task.id)).find((pending) => pending.id === inputId);
    if (!input) return false;
    if (!(await this.store.answerInput(task.id, inputId, checkedAnswer(input, answer)))) return false;
    this.bus.publish({ type: "answer", taskId: task.id, inputId });
    this.logger.info({ audit: "input_answered", taskId: task.id, owner: task.owner, method: input.method, peer: caller.peer ?? null }, "input request answered");
    return true;
  }

  /** Runs the sweeper once now (tests, and operators who want an immediate cleanup). */
  sweep(): Promise<void> {
    return this.sweeper.runOnce();
  }

  /**
   * The task as `owner` may see it: "not found" when unknown or foreign (T-ERR-1, T-SEC-3),
   * "expired" past its retention (T-ERR-7) — also once swept, while the store remembers the id.
   */
  private async read(taskId: unknown, owner: string | null): Promise<TaskRecord> {
    const id = checkTaskId(taskId);
    const task = await this.store.get(id, { owner });
    if (!task) throw (await this.store.wasExpired(id, { owner })) ? TaskError.expired() : TaskError.notFound();
    if (isExpired(task, this.now(), this.keepFinishedMs)) throw TaskError.expired();
    this.tracing.taskRead(task);
    return task;
  }

  /**
   * A waiter's read. A store that cannot be reached right now (a database restarting: the bus's
   * reconnection is often the wake-up) does not end the wait: the requestor is waiting anyway, so
   * the read is made again shortly, until the store answers, the request is abandoned or the
   * engine closes.
   */
  private async reread(id: string, owner: string | null, signal: AbortSignal): Promise<TaskRecord> {
    for (let delay = 100; ; delay = Math.min(delay * 2, 2000)) {
      try {
        return await this.read(id, owner);
      } catch (error) {
        const condition = storageCondition(error);
        if (!condition || signal.aborted || this.closing.signal.aborted) throw error;
        this.logger.debug({ taskId: id, reason: condition.reason, retryInMs: delay, err: error }, "a waiter's read failed; reading again");
        await new Promise<void>((resolve) => {
          const done = (): void => {
            clearTimeout(timer);
            signal.removeEventListener("abort", done);
            this.closing.signal.removeEventListener("abort", done);
            resolve();
          };
          const timer = setTimeout(done, delay);
          signal.addEventListener("abort", done, { once: true });
          this.closing.signal.addEventListener("abort", done, { once: true });
        });
      }
    }
  }

  /**
   * Runs one lookup of a request within its caller's limits (T-SEC-4): refused over the caller's
   * operation rate, and while it cools down after too many failed lookups — a caller bound to
   * nobody before the store is read, one with an owner only when the lookup fails, so it keeps
   * reaching its own tasks (CallerLimits.admitLookup). A failed lookup (unknown, foreign or expired
   * id, bad cursor) is audited (T-SEC-5) and counted against the caller.
   */
  private async lookup<T>(attempt: Attempt, run: () => Promise<T>): Promise<T> {
    this.limits.admitLookup(attempt);
    this.limits.admit(attempt);
    try {
      return await run();
    } catch (error) {
      if (error instanceof TaskError && (error.kind === "not_found" || error.kind === "expired" || error.kind === "bad_cursor")) {
        this.limits.refuseWhileCooling(attempt);
        const { caller, operation, taskId } = attempt;
        this.logger.info(
          { audit: "lookup_denied", reason: error.kind, taskId: typeof taskId === "string" ? taskId : null, owner: caller.owner, operation, peer: caller.peer ?? null },
          "task lookup failed",
        );
        this.limits.lookupFailed(attempt);
      }
      throw error;
    }
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

/** How long a swept task's id answers "expired": the default maximum ttl, so a requestor that waited as long as a task may live still learns why it is gone. */
const DEFAULT_REMEMBER_EXPIRED_MS = 24 * 60 * 60 * 1000;

/** `retryAfterMs` of the refusal of a creation over the queue bound: about one short task's run. */
const QUEUED_RETRY_AFTER_MS = 1000;

/** `retryAfterMs` of the refusal of new tasks while draining: a balancer's next pick, or the restarted process. */
const DRAINING_RETRY_AFTER_MS = 1000;

/**
 * The task as its terminal transition left it, from the last read (fixed fields, ownership
 * already checked) and that transition's event (what it wrote). Expiry is judged as a read would.
 */
function endedAs(task: TaskRecord, event: Extract<TaskEvent, { type: "status" }>, now: number, keepFinishedMs: number): TaskRecord {
  const ended: TaskRecord = { ...task, status: event.status, statusMessage: event.statusMessage, updatedAt: event.updatedAt, outcome: event.outcome ?? null };
  if (isExpired(ended, now, keepFinishedMs)) throw TaskError.expired();
  return ended;
}

/** The taskId of a request, checked for shape (the store lookup decides whether it exists). */
function checkTaskId(taskId: unknown): string {
  if (typeof taskId !== "string" || taskId.length === 0 || taskId.length > 256) {
    throw TaskError.invalidParams("Invalid taskId: must be a non-empty string");
  }
  return taskId;
}
