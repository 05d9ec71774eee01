import type { TaskRecord } from "../core/task.js";

/**
 * A worker's hold on a task, as a claim handed it out: the fence every write of that run carries.
 * A store applies a write that names a claim only while that claim is still the task's current
 * one — the same lease owner and the same generation — so a worker that was cut off, lost its
 * lease and came back late changes nothing: the reaper re-queued the task and another claim (a
 * higher generation) runs it now. Stores that hand out no claims (memory, SQLite: one process
 * runs every task) never hold one, so a write naming a claim changes nothing there either.
 */
export interface Claim {
  /** The lease owner: the worker the task was leased to. */
  readonly workerId: string;
  /** Counts every claim of the task and never goes back (a hand-back un-counts the attempt, not this). */
  readonly generation: number;
  /** Which run of the task this is (1 for the first), as the retry rules count runs; for logs. */
  readonly attempt: number;
}

/** A task as a claim returned it, with that claim. */
export type ClaimedTask = TaskRecord & { readonly claim: Claim };

/** Why a write naming a claim was dropped: what a worker logs (task id, worker, attempt). */
export function claimFields(taskId: string, claim: Claim): { taskId: string; workerId: string; attempt: number; generation: number } {
  return { taskId, workerId: claim.workerId, attempt: claim.attempt, generation: claim.generation };
}
