/**
 * The task lifecycle (spec T-LIFE). This file is the single guard every status write passes
 * through: stores turn {@link allowedSources} into the `WHERE status IN (…)` of their
 * compare-and-set, so a transition that is not in this table can never reach storage.
 */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/** Every task status, in lifecycle order. */
export const TASK_STATUSES: readonly TaskStatus[] = ["working", "input_required", "completed", "failed", "cancelled"];

/** T-LIFE-3: these never move again. */
export const TERMINAL_STATUSES: readonly TaskStatus[] = ["completed", "failed", "cancelled"];

/** Statuses in which a task still occupies an executor slot. */
export const ACTIVE_STATUSES: readonly TaskStatus[] = ["working", "input_required"];

// T-LIFE-2: working → input_required | completed | failed | cancelled;
//           input_required → working | completed | failed | cancelled.
const TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  working: ["input_required", "completed", "failed", "cancelled"],
  input_required: ["working", "completed", "failed", "cancelled"],
  completed: [],
  failed: [],
  cancelled: [],
};

/** Whether a task in this status is done for good (T-LIFE-3). */
export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

/** Whether the lifecycle allows a task to move from `from` to `to` (T-LIFE-2). */
export function canTransition(from: TaskStatus, to: TaskStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** The statuses a task may be in for a move to `to` to be legal. */
export function allowedSources(to: TaskStatus): TaskStatus[] {
  return TASK_STATUSES.filter((from) => canTransition(from, to));
}

export function isTaskStatus(value: unknown): value is TaskStatus {
  return typeof value === "string" && (TASK_STATUSES as readonly string[]).includes(value);
}
