import { randomUUID } from "node:crypto";
import { TaskError, RpcCode, toRpcError } from "../core/errors.js";
import { ACTIVE_STATUSES } from "../core/task-status.js";
import type { RpcErrorShape, TaskOutcome, TaskRecord } from "../core/task.js";
import type { EventBus } from "../events/event-bus.js";
import type { StoreNotify } from "../core/store-notify.js";
import type { TaskStore } from "../store/task-store.js";
import type { EngineObserver } from "./engine-observer.js";
import type { Logger } from "../core/logger.js";
import { taskAuditFields } from "./task-audit.js";
import { reportLimitHit } from "./limits/quotas.js";
import type { TaskContext, TaskRunner } from "./task-context.js";
import type { TaskTracing } from "./task-tracing.js";
import { statusEvent } from "../events/task-event.js";
import type { InputRequest } from "../core/task.js";
import { ProgressWriter } from "./progress-writer.js";
import { RunJournal } from "./run-journal.js";
import { retryOnStorageCondition } from "./storage-retry.js";
import { notifyWith, publishAfterWrite } from "./carried-notify.js";
import { claimFields, type Claim } from "../store/claim.js";
import { StoreError } from "../store/store-rules.js";
import { RunWaits, type RunSlots } from "./run-waits.js";
import { isWaitStore } from "../store/wait-store.js";

interface ExecutionDeps {
  store: TaskStore;
  bus: EventBus;
  runner: TaskRunner;
  logger: Logger;
  now: () => number;
  observer: EngineObserver;
  /** Unanswered input requests one run of a handler may have out at once. */
  maxQueuedInputs: number;
  /** Largest outcome (result or error) stored, in serialized JSON bytes. */
  maxResultBytes: number;
  /** Whether a request of this process waits on the task (its status writes then commit at once). */
  awaited: (taskId: string) => boolean;
  /** Told where each run's waits begin and end. */
  tracing: TaskTracing;
}

/**
 * Why a running handler's signal was aborted; the reason is visible to the handler. "drain": the
 * process is going away and hands the task back (docs/deployment.md):
 * whatever the handler ends with afterwards is not stored, the task runs again elsewhere.
 */
export type AbortReason = "cancelled" | "expired" | "shutdown" | "lease_lost" | "drain";

/**
 * Runs handlers and stores what they end with. One instance per engine; it knows which tasks run
 * in this process so cancel/expiry/shutdown can abort them.
 */
export class TaskExecution {
  private readonly running = new Map<string, AbortController>();
  /** The claims the runs here hold (a worker of a cluster), by task id. */
  private readonly claims = new Map<string, Claim>();
  /** Resolved each time a run ends (see {@link whenNoneRunning}). */
  private ended: Array<() => void> = [];
  /** How runs here give their slot back while they wait, and who hears of waits (see {@link useWaitHooks}). */
  private waitHooks: WaitHooks = { slots: null, registered: () => {}, requeued: () => {} };

  constructor(private readonly deps: ExecutionDeps) {}

  /** Set once by whoever claims the tasks run here: its slots, and what it does when a wait is stored or a task queued again. */
  useWaitHooks(hooks: WaitHooks): void {
    this.waitHooks = hooks;
  }

  isRunningHere(taskId: string): boolean {
    return this.running.has(taskId);
  }

  /** Aborts a handler running in this process; other nodes hear the bus's `cancel` event. */
  abort(taskId: string, reason: AbortReason): void {
    this.running.get(taskId)?.abort(reason);
  }

  /** Aborts every handler running here not already aborted; returns the ids of those it aborted. */
  abortAll(reason: AbortReason): string[] {
    const ids: string[] = [];
    for (const [id, controller] of this.running) {
      if (controller.signal.aborted) continue;
      controller.abort(reason);
      ids.push(id);
    }
    return ids;
  }

  /** The claim the run of `taskId` here holds, if it runs here under one. */
  claimOf(taskId: string): Claim | undefined {
    return this.claims.get(taskId);
  }

  /** The ids of the tasks whose handlers run in this process now. */
  runningIds(): string[] {
    return [...this.running.keys()];
  }

  /**
   * Resolves once none of `ids` runs here any more (all when omitted), or when `signal` aborts.
   * Runs started after the call are not waited for unless named.
   */
  async whenNoneRunning(ids: readonly string[] | null, signal?: AbortSignal): Promise<void> {
    const pending = (): boolean => (ids === null ? this.running.size > 0 : ids.some((id) => this.running.has(id)));
    while (pending() && !signal?.aborted) {
      await new Promise<void>((resolve) => {
        const onAbort = (): void => resolve();
        signal?.addEventListener("abort", onAbort, { once: true });
        this.ended.push(() => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        });
      });
    }
  }

  /**
   * Runs the task's handler to its end. Never throws: every outcome is stored or logged.
   * `claimed`: the task was just claimed from the store as active, and the claimer watched for
   * cancels meanwhile (WorkerPool, LocalDispatcher), so it is not read again before its handler starts.
   * `claim`: the claim it runs under (a worker of a cluster): every write of the run names it, so
   * once the claim is superseded (the lease was lost and the task re-queued or taken over) the
   * run's writes change nothing and are logged as dropped.
   */
  async run(task: TaskRecord, options: { claimed?: boolean; claim?: Claim } = {}): Promise<void> {
    const { store, bus, runner, logger, now } = this.deps;
    const controller = new AbortController();
    this.running.set(task.id, controller);
    const stopListening = bus.onTask(task.id, (event) => {
      if (event.type === "cancel") controller.abort(event.reason);
    });
    // A cancel or expiry that landed between creation and now had no handler to abort: the task
    // is already terminal, so its handler must not start at all (T-CANCEL-3). Registered above
    // first, so a cancel after this read still reaches the controller.
    const current = options.claimed ? task : await store.get(task.id, { any: true }).catch(() => task);
    if (current === null || !ACTIVE_STATUSES.includes(current.status)) {
      logger.info({ taskId: task.id, status: current?.status ?? "deleted" }, "handler not started: task no longer active");
      this.finish(task.id, stopListening);
      return;
    }
    const claim = options.claim;
    if (claim) this.claims.set(task.id, claim);
    if (task.waitMode === "memory" && isWaitStore(store)) {
      // Left by a run that died while it waited: this run holds a slot until it waits itself.
      await store.setWaitMode(task.id, null, claim).catch(() => false);
    }
    const { ctx, progress, waits } = this.context(task, controller.signal, claim);
    let status: "completed" | "failed";
    let outcome: TaskOutcome;
    let statusMessage: string | null = null;
    try {
      // A parked run is let go: its handler's promise never settles, the task waits in the store.
      const ran = runner(task, ctx);
      const result = await Promise.race([ran, waits.parked.then((): typeof PARKED => PARKED)]);
      if (result === PARKED) {
        await progress.settled();
        logger.info({ taskId: task.id }, "task parked: nothing of it runs until what it waits for arrives");
        this.finish(task.id, stopListening, controller);
        return;
      }
      outcome = { kind: "result", value: result.value };
      status = result.failed ? "failed" : "completed";
      // T-LIFE-4: a failed task SHOULD carry a diagnostic statusMessage.
      if (status === "failed") statusMessage = result.statusMessage ?? "The request did not complete successfully";
      else if (result.statusMessage !== undefined) statusMessage = result.statusMessage;
    } catch (error) {
      if (controller.signal.aborted) {
        // Cancelled or expired: the status is already final; whatever the handler threw on its
        // way out is noise, not an outcome (T-CANCEL-4). Drained: the task was handed back and
        // stays active for the run that takes it over.
        logger.debug({ taskId: task.id, reason: controller.signal.reason, err: describe(error) }, "handler ended after abort");
        this.finish(task.id, stopListening);
        return;
      }
      const rpcError = toStoredError(error);
      if (rpcError.code === RpcCode.InternalError && !(error instanceof TaskError)) {
        // The stack stays in our log; the requestor only learns that something broke.
        logger.error({ taskId: task.id, err: error }, "task handler threw");
      }
      outcome = { kind: "error", error: rpcError };
      status = "failed";
      statusMessage = rpcError.message;
    }
    if (controller.signal.reason === "drain") {
      // Handed back: the run that takes the task over (another worker, or this file's next
      // process) produces its outcome; storing this one — often the handler's reaction to the
      // abort — would end a task that is meant to go on.
      logger.info({ taskId: task.id, dropped: status }, "outcome of a drained handler not stored: the task was handed back");
      this.finish(task.id, stopListening);
      return;
    }
    // The handler's last progress report is stored before its outcome, not after it (fenced off).
    await progress.settled();
    const refused = this.refuseOutcome(task, outcome);
    if (refused) {
      outcome = { kind: "error", error: refused };
      status = "failed";
      statusMessage = refused.message;
    }
    // A worker's outcome is retried for as long as it holds the claim: the pool keeps renewing the
    // lease meanwhile (the task still runs here), so no reaper takes a task whose outcome is on its
    // way. Only a renewal that finds the lease gone ends the retries (after one last attempt: a
    // lease that ran out but was not taken yet still accepts the write).
    const leaseLost = (): boolean => controller.signal.reason === "lease_lost";
    try {
      // In a cluster on PostgreSQL the outcome's NOTIFY (waking the waiting tasks/result) goes
      // with the write; every field of its event is known before it (the message and outcome are
      // set, not kept; the times and ttl are the task's). Made again for each attempt: its time.
      let notify: StoreNotify | undefined;
      const updated = await retryOnStorageCondition(
        () => {
          const at = now();
          notify = notifyWith(store, bus, {
            type: "status",
            taskId: task.id,
            status,
            sessionId: task.origin.sessionId,
            statusMessage,
            updatedAt: at,
            createdAt: task.createdAt,
            ttlMs: task.ttlMs,
            pollIntervalMs: task.pollIntervalMs,
            outcome,
          });
          return store.transition(task.id, ACTIVE_STATUSES, status, {
            outcome,
            statusMessage,
            now: at,
            ...(notify && { notify }),
            ...(claim && { claim }),
            ...(this.deps.awaited(task.id) && { awaited: true }),
          });
        },
        logger,
        { taskId: task.id, ...(claim && { workerId: claim.workerId, attempt: claim.attempt }) },
        claim ? { while: () => !leaseLost(), signal: controller.signal } : {},
      );
      if (updated) {
        publishAfterWrite(bus, statusEvent(updated), notify);
        logger.info({ audit: status, ...taskAuditFields(task), name: task.name }, `task ${status}`);
      } else if (claim) {
        await this.logDroppedOutcome(task, claim, status);
      } else {
        // T-CANCEL-4: the task was cancelled or expired meanwhile; the late outcome is dropped.
        logger.info({ taskId: task.id, dropped: status }, "late outcome dropped: task already terminal");
      }
    } catch (error) {
      if (claim && leaseLost()) {
        logger.error(
          { ...claimFields(task.id, claim), dropped: status, err: error },
          "the outcome could not be stored before the lease ran out",
        );
      } else {
        logger.error({ taskId: task.id, err: error }, "could not store task outcome");
      }
    }
    this.finish(task.id, stopListening);
  }

  /**
   * A worker's outcome matched nothing: the task ended meanwhile (cancelled, expired — T-CANCEL-4)
   * or the claim was superseded (its lease ran out and the task was re-queued, taken over by
   * another worker, or failed by the reaper): either way the outcome is not the task's.
   */
  private async logDroppedOutcome(task: TaskRecord, claim: Claim, status: string): Promise<void> {
    const { store, logger } = this.deps;
    const now = await store.get(task.id, { any: true }).catch(() => null);
    if (now !== null && (now.status === "cancelled" || (now.expiresAt !== null && now.expiresAt <= this.deps.now()))) {
      logger.info({ taskId: task.id, dropped: status }, "late outcome dropped: task already terminal");
      return;
    }
    logger.warn(
      { ...claimFields(task.id, claim), dropped: status, status: now?.status ?? "deleted" },
      "write of a superseded claim dropped: the outcome was not stored (the task's lease was lost; another run holds it)",
    );
  }

  /**
   * The error stored instead of an outcome the store must not hold: one larger than
   * `maxResultBytes` (never written, so one handler cannot fill the store or every reader's
   * memory), or one that is not JSON at all. Null when the outcome may be stored as it is.
   */
  private refuseOutcome(task: TaskRecord, outcome: TaskOutcome): RpcErrorShape | null {
    const { logger, observer, maxResultBytes } = this.deps;
    let bytes: number;
    try {
      const json = JSON.stringify(outcome.kind === "result" ? outcome.value : outcome.error) as string | undefined;
      bytes = json === undefined ? 0 : Buffer.byteLength(json);
    } catch (error) {
      logger.error({ taskId: task.id, err: error }, "task outcome is not serializable as JSON");
      return { code: RpcCode.InternalError, message: "Internal error" };
    }
    if (bytes <= maxResultBytes) return null;
    reportLimitHit(observer, logger, { limit: "result_bytes", ...taskAuditFields(task) });
    // -32603: the requestor's request was fine; the server could not produce an answer it may keep.
    return toStoredError(
      TaskError.limitExceeded("result_bytes", maxResultBytes, `Result exceeds ${maxResultBytes} bytes`, {
        code: RpcCode.InternalError,
        data: { bytes },
      }),
    );
  }

  private finish(taskId: string, stopListening: () => void, controller?: AbortController): void {
    stopListening();
    // A newer run of the task may already be here (a parked run's task, queued again at once).
    if (controller === undefined || this.running.get(taskId) === controller) {
      this.running.delete(taskId);
      this.claims.delete(taskId);
    }
    const waiting = this.ended;
    this.ended = [];
    for (const wake of waiting) wake();
  }

  private context(
    task: TaskRecord,
    signal: AbortSignal,
    claim: Claim | undefined,
  ): { ctx: TaskContext; progress: ProgressWriter; waits: RunWaits } {
    const { store, bus, logger, now, tracing } = this.deps;
    const fenced = claim ? { claim } : {};
    const dropped = (what: string): void => {
      if (claim)
        logger.warn({ ...claimFields(task.id, claim), dropped: what }, `write of a superseded claim dropped: the ${what} was not stored`);
    };
    // One run of a handler is the only writer of its task's queue (a re-run supersedes what an
    // earlier run left), so its own count is the task's pending count: no store query, and no race
    // between concurrent requests of one handler.
    const queued = { count: 0 };
    const journal = new RunJournal(this.deps, task, claim);
    const hooks = this.waitHooks;
    const waits = new RunWaits({ store, bus, logger, now, tracing, ...hooks }, task, journal, signal, claim);
    const progressWriter = new ProgressWriter((report) =>
      store.annotate(task.id, { progress: report, now: now(), ...fenced }).then(
        (written) => {
          if (!written) dropped("progress");
        },
        (err: unknown) => logger.warn({ taskId: task.id, err }, "could not store progress"),
      ),
    );
    const ctx: TaskContext = {
      taskId: task.id,
      signal,
      parked: waits.parked,
      progress(progress, total, message) {
        if (signal.aborted) return;
        const report = { progress, ...(total !== undefined && { total }), ...(message !== undefined && { message }) };
        bus.publish({
          type: "progress",
          taskId: task.id,
          sessionId: task.origin.sessionId,
          progressToken: task.origin.progressToken,
          progress: report,
        });
        progressWriter.report(report);
      },
      log(level, data, source) {
        if (signal.aborted) return;
        bus.publish({
          type: "log",
          taskId: task.id,
          sessionId: task.origin.sessionId,
          level,
          data,
          ...(source !== undefined && { logger: source }),
        });
      },
      async setStatusMessage(message) {
        if (signal.aborted) return;
        if (!(await store.annotate(task.id, { statusMessage: message, now: now(), ...fenced }))) dropped("status message");
      },
      accepts(method) {
        return task.origin.accepts.includes(method);
      },
      request: (method, params) => this.requestInput(task, signal, queued, journal, waits, method, params, claim),
      step: (name, fn) => waits.around(() => journal.step(name, fn)),
      keepInMemory: () => waits.keepInMemory(),
      sleep: (until) => waits.sleep(until),
      waitForEvent: (name, timeoutAt) => waits.waitForEvent(name, timeoutAt),
    };
    return { ctx, progress: progressWriter, waits };
  }

  private async requestInput(
    task: TaskRecord,
    signal: AbortSignal,
    queued: { count: number },
    journal: RunJournal,
    waits: RunWaits,
    method: string,
    params: unknown,
    claim: Claim | undefined,
  ): Promise<unknown> {
    const { store, bus, now, logger, observer, maxQueuedInputs } = this.deps;
    const fenced = claim ? { claim } : {};
    if (!task.origin.accepts.includes(method)) {
      throw new TaskError("method_not_found", `The requestor cannot answer ${method}: it did not declare that capability`);
    }
    signal.throwIfAborted();
    // A resumed run: the same question at the same position gets its stored answer, or — still
    // unanswered — is waited for again under its old id instead of being asked twice.
    const earlier = await journal.earlierQuestion(method);
    signal.throwIfAborted();
    if (earlier?.answer) {
      await waits.questionReplayed(earlier);
      return answerValue(earlier.answer);
    }
    if (queued.count >= maxQueuedInputs) {
      // Refused before anything is queued: the task and the requests already out are untouched.
      // -32603 if the handler lets it end the task: the requestor did nothing wrong.
      reportLimitHit(observer, logger, { limit: "queued_inputs", ...taskAuditFields(task) });
      throw TaskError.limitExceeded(
        "queued_inputs",
        maxQueuedInputs,
        `Too many queued input requests: at most ${maxQueuedInputs} per task`,
        {
          code: RpcCode.InternalError,
        },
      );
    }
    const inputId = earlier?.id ?? randomUUID();
    const askedAt = earlier?.createdAt ?? now();
    // Counted from here (no await since the check) until this request is answered or abandoned.
    queued.count++;
    try {
      // A question and its wait go on across a store that is unreachable for a while (a database
      // restarting): failing here would fail the task for what clears by itself. A claimed run
      // waits while it holds its lease (the pool aborts it once it is lost).
      const durable = <T>(op: () => Promise<T>): Promise<T> =>
        retryOnStorageCondition(op, logger, { taskId: task.id, inputId }, claim ? { while: () => !signal.aborted, signal } : {});
      if (earlier === null) {
        let tries = 0;
        try {
          await durable(async () => {
            try {
              tries++;
              await store.enqueueInput({ taskId: task.id, id: inputId, method, params, createdAt: askedAt }, claim);
            } catch (error) {
              // Sent again after a connection dropped under it: the first one was written.
              if (tries > 1 && error instanceof StoreError && error.reason === "duplicate_input") return;
              throw error;
            }
          });
        } catch (error) {
          if (claim && error instanceof StoreError && error.reason === "claim_lost") {
            logger.warn(
              { ...claimFields(task.id, claim), dropped: "input request", method },
              "write of a superseded claim dropped: the input request was not queued",
            );
            throw new TaskError("internal", "This run of the task lost its lease: another run holds the task now");
          }
          throw error;
        }
      }
      // T-INPUT-1: waiting on the requestor → input_required (a no-op when already there).
      const moved = await durable(() =>
        store.transition(task.id, ["working"], "input_required", {
          now: now(),
          ...fenced,
          ...(this.deps.awaited(task.id) && { awaited: true }),
        }),
      );
      if (moved) bus.publish(statusEvent(moved));
      bus.publish({ type: "input", taskId: task.id, inputId });
      // The answer: read after subscribing, so one that lands between the write and the wait is seen.
      let answer: InputRequest["answer"] = null;
      await waits.awaitAnswer(
        async () => (answer = (await durable(() => store.getInput(task.id, inputId)))?.answer ?? null) !== null,
        (resolve) =>
          bus.onTask(task.id, (event) => {
            if ((event.type === "answer" && event.inputId === inputId) || event.type === "wake") resolve();
          }),
        { id: inputId, method, askedAt },
      );
      await durable(() => this.resumeIfAnswered(task, claim));
      return answerValue(answer as unknown as NonNullable<InputRequest["answer"]>);
    } finally {
      queued.count--;
    }
  }

  /** T-INPUT-4: once nothing is pending, input_required → working. */
  private async resumeIfAnswered(task: TaskRecord, claim: Claim | undefined): Promise<void> {
    const { store, bus, now } = this.deps;
    const pending = await store.pendingInputs(task.id);
    if (pending.length > 0) return;
    const moved = await store.transition(task.id, ["input_required"], "working", { now: now(), ...(claim && { claim }) });
    if (moved) bus.publish(statusEvent(moved));
  }
}

/** What the race of a run's handler against its park answers when the run was parked. */
const PARKED: unique symbol = Symbol("parked");

/** What the claimer of this process's tasks gives runs that wait (see RunWaits). */
export interface WaitHooks {
  /** Its slots; null: handlers run without a slot limit. */
  slots: RunSlots | null;
  /** A wait with this due time was stored here. */
  registered(dueAt: number | null): void;
  /** A parked task was queued again by this process. */
  requeued(taskId: string): void;
}

/** The requestor's answer as the handler gets it: its result, or its JSON-RPC error thrown. */
function answerValue(answer: NonNullable<InputRequest["answer"]>): unknown {
  if (answer.kind === "error") {
    const { code, message, data } = answer.error;
    throw TaskError.protocol(code, message, data);
  }
  return answer.value;
}

/** The JSON-RPC error kept for `tasks/result` when a handler throws (T-RES-4): see {@link toRpcError}. */
export function toStoredError(error: unknown): RpcErrorShape {
  return toRpcError(error).body;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
