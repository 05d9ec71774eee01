import { deadlineSignal } from "../core/deadline-signal.js";
import type { Logger } from "../core/logger.js";
import type { TaskRecord } from "../core/task.js";
import type { EventBus } from "../events/event-bus.js";
import { statusEvent } from "../events/task-event.js";
import type { Claim } from "../store/claim.js";
import type { ClusterStore } from "../store/lease-store.js";
import type { TaskStore } from "../store/task-store.js";
import type { WorkerPool } from "./cluster/worker-pool.js";
import { taskAuditFields } from "./task-audit.js";
import type { TaskExecution } from "./task-execution.js";

/** Default grace period of a drain: how long running handlers get to finish (docs/limits.md). */
export const DEFAULT_DRAIN_GRACE_MS = 30_000;

/**
 * How long a handler aborted at the end of the grace period gets to return before the drain goes
 * on without it. Its outcome is not stored either way (see TaskExecution.run); this only keeps a
 * handler that ignores its signal from holding the process.
 */
const SETTLE_MS = 2_000;

/** The statusMessage of a task a draining worker gave back to the queue. */
export const HANDED_BACK_MESSAGE = "Handed back by a worker that shut down before the task finished; queued for another worker";

/**
 * The statusMessage of a task a draining single-node server gave back, until its next start
 * re-runs it. It is also the mark that start's recovery reads: a drain stopped the handler at a
 * known point (its checkpoints and questions are as it left them), unlike a crash, so the task is
 * re-run whatever its tool's recovery — as another worker would re-run it in a cluster.
 */
export const HANDED_BACK_LOCAL_MESSAGE = "Handed back by a server that shut down before the task finished; re-run at its next start";

/** Whether a stored active task was handed back by a single-node drain (see {@link HANDED_BACK_LOCAL_MESSAGE}). */
export function wasHandedBack(task: Pick<TaskRecord, "statusMessage">): boolean {
  return task.statusMessage === HANDED_BACK_LOCAL_MESSAGE;
}

/** What a drain did with the handlers that were running when it began. */
export interface DrainReport {
  /** Tasks whose handlers ended within the grace period (completed, failed or cancelled as usual). */
  finished: string[];
  /**
   * Tasks still running when the grace period ran out: their handlers were aborted with reason
   * "drain" and their tasks left active — in a cluster queued again for another worker, on a
   * single node left `working` / `input_required` in the store, marked handed back, for the next
   * start to re-run.
   */
  handedBack: string[];
}

export interface DrainDeps {
  execution: TaskExecution;
  /** Cluster mode: this process's workers, and the lease store they claim from. */
  cluster: { pool: WorkerPool; store: ClusterStore } | null;
  store: TaskStore;
  bus: EventBus;
  logger: Logger;
  now: () => number;
}

/**
 * Lets the handlers running here finish within `graceMs`, then hands the rest back instead of
 * failing them. New work must already be refused by the caller (TaskEngine.drain); a cluster's
 * workers stop claiming here first. `stop` ends the grace period early (the engine closing);
 * `runningAtStart`: the handlers running when the drain was asked for, for the report.
 */
export async function drainHandlers(
  deps: DrainDeps,
  graceMs: number,
  stop: AbortSignal,
  runningAtStart: readonly string[],
): Promise<DrainReport> {
  const { execution, cluster, logger } = deps;
  // What a claim in flight returns still runs here, so it is waited for before the count.
  await cluster?.pool.stopClaiming();
  const running = [...new Set([...runningAtStart, ...execution.runningIds()])];
  logger.info({ running: running.length, graceMs }, "draining: no new tasks; waiting for running handlers");
  // Not AbortSignal.any([stop, AbortSignal.timeout(graceMs)]): see deadline-signal.ts (Node 20).
  const grace = deadlineSignal({ signals: [stop], timeoutMs: graceMs });
  await execution.whenNoneRunning(null, grace.signal).finally(() => grace.clear());

  const aborted = execution.abortAll("drain");
  // Read while the runs are still registered: each is handed back under its own claim.
  const claims = new Map(aborted.map((id) => [id, execution.claimOf(id)]));
  const finished = running.filter((id) => !aborted.includes(id));
  if (aborted.length > 0) {
    const settle = deadlineSignal({ timeoutMs: SETTLE_MS });
    await execution.whenNoneRunning(aborted, settle.signal).finally(() => settle.clear());
  }
  const handedBack: string[] = [];
  for (const id of aborted) {
    if (await handBack(deps, id, claims.get(id))) handedBack.push(id);
  }
  logger.info({ finished: finished.length, handedBack: handedBack.length }, "drained");
  return { finished, handedBack };
}

/**
 * Gives one task back. In a cluster: queued again with its lease dropped, and announced, so
 * another worker claims it now rather than after the lease runs out. On a single node the task
 * stays active with the handed-back statusMessage: the next start's recovery re-runs it, where a
 * task left active without it (a crash) follows its tool's recovery.
 */
async function handBack(deps: DrainDeps, taskId: string, claim: Claim | undefined): Promise<boolean> {
  const { cluster, store, bus, logger, now } = deps;
  if (!cluster) {
    const marked = await store
      // On the task's timeline: the run ended here, drained (a cluster's hand-back is a status write, logged as every one is).
      .annotate(taskId, { statusMessage: HANDED_BACK_LOCAL_MESSAGE, now: now(), timeline: true })
      .catch((err: unknown) => {
        // Left unmarked, the next start treats it as interrupted by a crash (its tool's recovery).
        logger.error({ taskId, err }, "could not mark a drained task handed back");
        return false;
      });
    const task = marked ? await store.get(taskId, { any: true }).catch(() => null) : null;
    if (!task) return false;
    logger.warn(
      { audit: "handed_back", ...taskAuditFields(task), status: task.status },
      "left a drained task active for the next start to re-run",
    );
    return true;
  }
  // A run without a claim here was not leased to this worker: nothing of it to give back.
  if (claim === undefined) return false;
  let handed: TaskRecord | null;
  try {
    handed = await cluster.store.handBack(taskId, claim, now(), HANDED_BACK_MESSAGE);
  } catch (err) {
    // The lease then runs out and the reaper applies the retry rules, as after a crash.
    logger.error({ taskId, err }, "could not hand a drained task back; its lease will run out");
    return false;
  }
  if (!handed) return false;
  logger.warn(
    { audit: "handed_back", ...taskAuditFields(handed), workerId: cluster.pool.workerId },
    "handed a drained task back to the queue",
  );
  // `working` again: every worker's pool kicks on it (this one no longer claims).
  bus.publish(statusEvent(handed));
  return true;
}
