import type { TaskRecord } from "../core/task.js";

/**
 * How a task interrupted by a crash, a restart or a lost worker is recovered (docs/durable-execution.md):
 * - `resume`: re-run from the start with its checkpoints (`step`) and stored answers replayed, a
 *   still-unanswered question re-attached rather than asked again;
 * - `retry`: re-run from scratch (checkpoints and the lost run's questions dropped);
 * - `fail`: failed with a statusMessage saying why (the default: re-running side effects nobody
 *   declared safe to repeat could do harm).
 */
export type RecoveryPolicy = "resume" | "retry" | "fail";

export const RECOVERY_POLICIES: readonly RecoveryPolicy[] = ["resume", "retry", "fail"];

/** The policy a stored task was created with. */
export function recoveryOf(task: Pick<TaskRecord, "retryable" | "origin">): RecoveryPolicy {
  if (task.origin.recovery === "resume") return "resume";
  return task.retryable ? "retry" : "fail";
}
