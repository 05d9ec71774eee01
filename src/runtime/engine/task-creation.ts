import type { Caller } from "../../core/caller.js";
import { TaskError } from "../../core/errors.js";
import { isDerivedKey, keyConflict, requestorKeyOf, type TaskKey } from "../../core/idempotency.js";
import type { Logger } from "../../core/logger.js";
import { newTaskId } from "../../core/task-id.js";
import { isTerminal } from "../../core/task-status.js";
import { isExpired, type NewTask, type TaskOrigin, type TaskRecord } from "../../core/task.js";
import { resolveTtl, type TtlPolicy } from "../../core/ttl-policy.js";
import type { EventBus } from "../../events/event-bus.js";
import { createdEvent, statusEvent } from "../../events/task-event.js";
import { isQueueView } from "../../store/run-queue.js";
import type { TaskStore } from "../../store/task-store.js";
import { notifyWith, publishAfterWrite } from "../carried-notify.js";
import type { EngineObserver } from "../engine-observer.js";
import type { CallerLimits } from "../limits/caller-limits.js";
import type { OwnerCounts } from "../limits/owner-counts.js";
import { reportLimitHit } from "../limits/quotas.js";
import { pausedMessage } from "./task-lookups.js";
import type { RecoveryPolicy } from "../recovery-policy.js";
import { routeWebhooks, type RequestedWebhook } from "../webhooks/webhook-routing.js";
import type { WebhookSettings } from "../webhooks/webhook-config.js";

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
  /** The per-task webhook the request asked for, checked against the allow-list by the binding. */
  webhook?: RequestedWebhook;
}

/** What a creation did: created the task, or found the one its idempotency key names. */
export interface KeyedTask {
  task: TaskRecord;
  /** False when the key already named this task (nothing created, nothing run). */
  created: boolean;
}

interface CreationDeps {
  store: TaskStore;
  bus: EventBus;
  logger: Logger;
  observer: EngineObserver;
  limits: CallerLimits;
  /** The two per-owner caps' counts, read from the store only now and then (see OwnerCounts). */
  ownerCounts: OwnerCounts;
  now: () => number;
  ttlPolicy: TtlPolicy;
  pollIntervalMs: number | null;
  keepFinishedMs: number;
  maxActivePerOwner: number;
  maxStoredPerOwner: number;
  maxQueuedPerOwner: number | null;
  /** Log the request's arguments with `created` (off: they may hold what the audit log must not). */
  auditArguments: boolean;
  /** Throws unless the engine serves requests now (started, not closed, not draining). */
  admitNew(): void;
  /** Whether a tool is paused: its task is created and queued all the same, and says so. */
  isPaused(name: string): boolean;
  /** Starts a stored task's handler as this process does (at once, through its queue, or through a cluster's workers). */
  schedule(task: TaskRecord): void;
  /** Which webhook endpoints hear a new task (null: none configured). */
  webhooks: WebhookSettings | null;
}

/** `retryAfterMs` of the refusal of a creation over the queue bound: about one short task's run. */
const QUEUED_RETRY_AFTER_MS = 1000;

/**
 * Where tasks are made: the one creation path of every task, keyed or not — limits, ttl policy,
 * owner binding, the store's write, the audit line, the created event and the handler's start.
 */
export class TaskCreation {
  /** Creations past the open check whose task may not be stored yet: a drain waits for them. */
  private readonly creating = new Set<Promise<unknown>>();

  constructor(private readonly deps: CreationDeps) {}

  /**
   * Creates a task in `working` (T-LIFE-1) and schedules its handler after the caller has had the
   * chance to answer with the snapshot (T-NEW-2: returned before the work runs).
   *
   * Under an idempotency key (SEP-3182) the first creation with the caller's key stores and runs
   * the task; every later one with an equivalent call (the same fingerprint) gets that task back
   * as it is now, created and run nothing. Uniqueness is the store's, so this holds across the
   * nodes of a cluster and across restarts. A different call under the same key is a conflict
   * (-32602, nothing run). A key whose task has expired names nothing any more: the call is new.
   * A key the server derived (a keyless retry of an idempotent tool) names its task only while it
   * runs: once the task has ended the next identical call is new.
   */
  async create(input: CreateTaskInput, key: TaskKey | null): Promise<KeyedTask> {
    this.deps.admitNew();
    const creating = this.stored(input, key);
    this.creating.add(creating);
    try {
      return await creating;
    } finally {
      this.creating.delete(creating);
    }
  }

  /** Resolves once every creation that passed the open check has settled (a drain's start). */
  async settled(): Promise<void> {
    while (this.creating.size > 0) await Promise.allSettled([...this.creating]);
  }

  private async stored(input: CreateTaskInput, key: TaskKey | null): Promise<KeyedTask> {
    const { store, bus, logger, observer, limits, ownerCounts, now } = this.deps;
    limits.admit({ caller: input, operation: "create" });
    // A retry of a keyed creation asks for a task that already exists: the caps bound new tasks,
    // so a caller at its cap still gets its task back instead of a refusal.
    if (key !== null) {
      const known = await this.knownKey(input.owner, input.name, key);
      if (known) return known;
    }
    const ttlMs = resolveTtl(input.ttl, this.deps.ttlPolicy);
    // Tasks without an owner share one allowance of each: without authentication the server cannot
    // tell requestors apart, and exempting them would leave the store unbounded.
    const cap = await ownerCounts.reserve(input.owner);
    if (cap === "active_tasks") {
      const max = this.deps.maxActivePerOwner;
      reportLimitHit(observer, logger, { limit: "active_tasks", owner: input.owner, method: input.method, peer: input.peer ?? null });
      throw TaskError.limitExceeded("active_tasks", max, `Too many active tasks: at most ${max} per requestor`);
    }
    if (cap === "stored_tasks") {
      const max = this.deps.maxStoredPerOwner;
      reportLimitHit(observer, logger, { limit: "stored_tasks", owner: input.owner, method: input.method, peer: input.peer ?? null });
      throw TaskError.limitExceeded(
        "stored_tasks",
        max,
        `Too many stored tasks: at most ${max} per requestor, finished ones included until their ttl runs out`,
      );
    }
    await this.admitQueued(input);
    const recovery: RecoveryPolicy = input.recovery ?? (input.retryable ? "retry" : "fail");
    const peered = input.peer === undefined ? input.origin : { ...input.origin, peer: input.peer };
    const routes = this.deps.webhooks === null ? [] : routeWebhooks(this.deps.webhooks, input.owner, input.webhook);
    const origin = routes.length === 0 ? peered : { ...peered, webhooks: routes };
    let task: TaskRecord;
    const createdAt = now();
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
      pollIntervalMs: this.deps.pollIntervalMs,
      retryable: recovery !== "fail",
    };
    // In a cluster on PostgreSQL the creation's NOTIFY (waking the workers) goes with the insert.
    const notify = notifyWith(store, bus, createdEvent(fresh));
    try {
      if (key === null) {
        task = await store.create(fresh, notify);
      } else {
        const keyed = await this.storeKeyed(fresh, key, notify);
        if (!keyed.created) {
          ownerCounts.settle(input.owner, false);
          return keyed;
        }
        task = keyed.task;
      }
    } catch (error) {
      ownerCounts.settle(input.owner, false);
      throw error;
    }
    ownerCounts.settle(input.owner, true);
    logger.info(
      {
        audit: "created",
        taskId: task.id,
        owner: task.owner,
        method: task.method,
        peer: input.peer ?? null,
        name: task.name,
        ttlMs,
        ...(this.deps.auditArguments && { request: task.request }),
      },
      "task created",
    );
    publishAfterWrite(bus, statusEvent(task, true), notify);
    this.deps.schedule(task);
    // Accepted and queued: the requestor reads why it does not start (as a get would tell it).
    if (this.deps.isPaused(task.name) && task.status === "working")
      return { task: { ...task, statusMessage: pausedMessage(task.name) }, created: true };
    return { task, created: true };
  }

  /**
   * The live task `key` already names, answered without writing anything; null when the key
   * names nothing or a task it no longer names (left to {@link storeKeyed} to let go). A different
   * call under the key is the conflict, here as there.
   */
  private async knownKey(owner: string | null, name: string, key: TaskKey): Promise<KeyedTask | null> {
    const { store, logger, now, keepFinishedMs } = this.deps;
    const found = await store.findKey(owner, key.key);
    if (!found) return null;
    const { task, fingerprint } = found;
    if (isExpired(task, now(), keepFinishedMs) || (isDerivedKey(key) && isTerminal(task.status))) return null;
    if (fingerprint !== key.fingerprint) {
      logger.info({ audit: "key_conflict", owner, name, taskId: task.id }, "idempotency key reused for another call");
      throw keyConflict(requestorKeyOf(key));
    }
    logger.info(
      { audit: "deduplicated", owner, name, taskId: task.id, status: task.status },
      "creation answered with the task its key names",
    );
    return { task, created: false };
  }

  /**
   * Stores `fresh` under `key`, or finds the live task the key already names. A key naming a task it should no longer name (expired; or derived, and
   * the task ended) is let go and claimed again, so a few rounds at most.
   */
  private async storeKeyed(fresh: NewTask, key: TaskKey, notify: ReturnType<typeof notifyWith>): Promise<KeyedTask> {
    const { store, logger, now, keepFinishedMs } = this.deps;
    for (let round = 0; round < 3; round++) {
      const outcome = await store.createKeyed(fresh, key, notify);
      if (outcome.created) return outcome;
      const { task, fingerprint } = outcome;
      const stale = isExpired(task, now(), keepFinishedMs) || (isDerivedKey(key) && isTerminal(task.status));
      if (stale) {
        await store.releaseKey(fresh.owner, key.key, task.id);
        continue;
      }
      if (fingerprint !== key.fingerprint) {
        logger.info(
          { audit: "key_conflict", owner: fresh.owner, name: fresh.name, taskId: task.id },
          "idempotency key reused for another call",
        );
        throw keyConflict(requestorKeyOf(key));
      }
      logger.info(
        { audit: "deduplicated", owner: fresh.owner, name: fresh.name, taskId: task.id, status: task.status },
        "creation answered with the task its key names",
      );
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
    const { store, ownerCounts, observer, logger } = this.deps;
    const max = this.deps.maxQueuedPerOwner;
    if (max === null || !isQueueView(store)) return;
    if ((await store.countQueued(input.owner)) < max) return;
    ownerCounts.settle(input.owner, false);
    reportLimitHit(observer, logger, { limit: "queued_tasks", owner: input.owner, method: input.method, peer: input.peer ?? null });
    throw TaskError.limitExceeded(
      "queued_tasks",
      max,
      `Too many queued tasks: at most ${max} per requestor may wait for a handler; retry later`,
      {
        data: { retryAfterMs: QUEUED_RETRY_AFTER_MS },
      },
    );
  }
}
