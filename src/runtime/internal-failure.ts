import { RpcCode } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { TaskOutcome, TaskRecord } from "../core/task.js";
import { ACTIVE_STATUSES } from "../core/task-status.js";
import type { EventBus } from "../events/event-bus.js";
import { statusEvent } from "../events/task-event.js";
import type { TaskStore } from "../store/task-store.js";
import type { AbortReason } from "./task-execution.js";
import { taskAuditFields } from "./task-audit.js";

/** Why the server, not the handler, ended a task. */
export type InternalFailureReason = "expired" | "restart" | "shutdown" | "lease_lost";

interface ReasonRule {
  /** The audit line's name (T-SEC-5); kept as operators' log queries know it. */
  audit: string;
  level: "info" | "warn";
  note: string;
  /** Handlers of the task still running somewhere are told to stop, with this reason. */
  cancel: AbortReason | null;
}

const REASONS: Readonly<Record<InternalFailureReason, ReasonRule>> = {
  // Expiry is the ttl doing its job, not an incident.
  expired: { audit: "expired", level: "info", note: "running task expired", cancel: "expired" },
  // Nothing runs any more: the process that ran the handler is gone.
  restart: { audit: "interrupted", level: "warn", note: "failed a task interrupted by a restart", cancel: null },
  // The engine aborted its own handlers already, and other nodes do not run this task.
  shutdown: { audit: "interrupted", level: "warn", note: "failed a task interrupted by a shutdown", cancel: null },
  // The lost worker may still be alive behind a partition: it must stop.
  lease_lost: { audit: "lease_lost", level: "warn", note: "failed a task whose worker was lost", cancel: "lease_lost" },
};

export interface InternalFailureDeps {
  store: TaskStore;
  bus: EventBus;
  logger: Logger;
  now: () => number;
}

export interface InternalFailureOptions {
  /** More fields for the audit line (e.g. the lost worker's id). */
  audit?: Record<string, unknown>;
  /**
   * The compare-and-set that ends the task; by default any active status → `failed`. The lease
   * reaper passes its own, which also checks the lease is still the expired one.
   */
  write?: (statusMessage: string, outcome: TaskOutcome, now: number) => Promise<TaskRecord | null>;
}

/**
 * Fails a task the server could not let finish: `failed` with `message` as its statusMessage and
 * a -32603 outcome carrying the same words (T-LIFE-4: a failed task says why; the requestor did
 * nothing wrong), one audit line, the status event, and a cancel event where a handler may still
 * run. Returns the failed task, or null when it had already ended (nothing is written or sent).
 */
export async function failInternally(
  deps: InternalFailureDeps,
  task: TaskRecord,
  reason: InternalFailureReason,
  message: string,
  options: InternalFailureOptions = {},
): Promise<TaskRecord | null> {
  const { store, bus, logger, now } = deps;
  const rule = REASONS[reason];
  const outcome: TaskOutcome = { kind: "error", error: { code: RpcCode.InternalError, message } };
  const failed = options.write
    ? await options.write(message, outcome, now())
    : await store.transition(task.id, ACTIVE_STATUSES, "failed", { statusMessage: message, outcome, now: now() });
  if (!failed) return null;
  logger[rule.level]({ audit: rule.audit, ...taskAuditFields(task), ...options.audit }, rule.note);
  bus.publish(statusEvent(failed));
  if (rule.cancel) bus.publish({ type: "cancel", taskId: task.id, reason: rule.cancel });
  return failed;
}
