/**
 * Rules every {@link TaskStore} implementation shares, kept in one place so the stores cannot
 * drift apart on ordering, limits or which misuse they refuse.
 */
import type { ListPosition } from "../core/cursor.js";
import { isTerminal, TASK_STATUSES, type TaskStatus } from "../core/task-status.js";
import type { TaskRecord } from "../core/task.js";
import type { TaskFilter, TransitionPatch } from "./task-store.js";

/** Why a store refused a write ({@link StoreError.reason}). */
export type StoreErrorReason = "duplicate_task" | "duplicate_input" | "unknown_task" | "invalid_patch" | "claim_lost";

/**
 * A store refused a write because of the caller, not because storage failed. Receivers generate
 * ids themselves (T-ID-1), so any of these means a bug upstream, never a requestor's mistake.
 */
export class StoreError extends Error {
  readonly reason: StoreErrorReason;

  constructor(reason: StoreErrorReason, message: string) {
    super(message);
    this.name = "StoreError";
    this.reason = reason;
  }
}

export function duplicateTaskError(id: string): StoreError {
  return new StoreError("duplicate_task", `task ${id} already exists`);
}

export function duplicateInputError(taskId: string, inputId: string): StoreError {
  return new StoreError("duplicate_input", `input request ${inputId} of task ${taskId} already exists`);
}

/** A write naming a claim that is no longer the task's current one (the worker lost its lease). */
export function claimLostError(taskId: string): StoreError {
  return new StoreError("claim_lost", `task ${taskId} is no longer held by this claim: its lease was lost`);
}

export function unknownTaskError(taskId: string): StoreError {
  return new StoreError("unknown_task", `task ${taskId} does not exist`);
}

/** An outcome belongs to the terminal write only (it is never rewritten afterwards, T-LIFE-3). */
export function checkTransitionPatch(to: TaskStatus, patch: TransitionPatch): void {
  if (patch.outcome !== undefined && !isTerminal(to)) {
    throw new StoreError("invalid_patch", `an outcome can only be stored with a terminal status, not '${to}'`);
  }
}

/**
 * The (createdAt, id) order of `list` and `activeTasks`. Ids are compared by UTF-16 code unit,
 * which equals SQLite's BINARY collation for the ASCII ids `newTaskId` produces.
 */
export function compareByCreation(a: ListPosition, b: ListPosition): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Oldest deadline first, so a bounded sweep always makes progress on the most overdue tasks. */
export function compareByExpiry(a: { expiresAt: number | null; id: string }, b: { expiresAt: number | null; id: string }): number {
  const x = a.expiresAt ?? Number.POSITIVE_INFINITY;
  const y = b.expiresAt ?? Number.POSITIVE_INFINITY;
  if (x !== y) return x < y ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * A batch size both stores agree on. SQLite reads a negative LIMIT as "no limit", so a zero or
 * negative (or NaN) request must become an explicit empty batch rather than reach SQL.
 */
export function wholeLimit(limit: number): number {
  if (Number.isNaN(limit) || limit <= 0) return 0;
  return Math.min(Math.floor(limit), Number.MAX_SAFE_INTEGER);
}

/** Whether a task matches a {@link TaskFilter}: the predicate both stores' `search` share. */
export function matchesFilter(
  task: Pick<TaskRecord, "id" | "owner" | "status" | "name" | "createdAt" | "waitMode">,
  filter: TaskFilter,
): boolean {
  if (!("any" in filter.scope) && task.owner !== filter.scope.owner) return false;
  if (filter.parked === true && task.waitMode !== "parked") return false;
  if (filter.statuses !== undefined && !filter.statuses.includes(task.status)) return false;
  if (filter.idPrefix !== undefined && !task.id.startsWith(filter.idPrefix)) return false;
  if (
    filter.ownerName !== undefined &&
    (task.owner === null || (task.owner !== filter.ownerName && ownerSubject(task.owner) !== filter.ownerName))
  )
    return false;
  if (filter.createdFrom !== undefined && task.createdAt < filter.createdFrom) return false;
  if (filter.createdTo !== undefined && task.createdAt >= filter.createdTo) return false;
  return filter.name === undefined || task.name === filter.name;
}

/** The subject part of an `issuer|subject` owner key (the text after the first "|"); the key itself when it has none. */
export function ownerSubject(owner: string): string {
  const bar = owner.indexOf("|");
  return bar < 0 ? owner : owner.slice(bar + 1);
}

/** A count for every status, all zero: what `countByStatus` starts from. */
export function zeroStatusCounts(): Record<TaskStatus, number> {
  const counts = {} as Record<TaskStatus, number>;
  for (const status of TASK_STATUSES) counts[status] = 0;
  return counts;
}

/**
 * Whether `filter` is answered from the counts kept per (owner, tool, status) — scope, name and
 * statuses only — without reading a task. The web view's other filters (id prefix, owner name,
 * creation time, parked) count the matching rows with an ordinary query.
 */
export function countsFromTotals(filter: TaskFilter): boolean {
  return (
    filter.idPrefix === undefined &&
    filter.ownerName === undefined &&
    filter.createdFrom === undefined &&
    filter.createdTo === undefined &&
    filter.parked !== true
  );
}

/** The key of an owner in the counts tables: a task without one has a key too. */
export function ownerKey(owner: string | null): string {
  return owner === null ? "N" : `O${owner}`;
}
