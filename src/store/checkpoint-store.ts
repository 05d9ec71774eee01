import type { TaskStore } from "./task-store.js";
import type { Claim } from "./claim.js";

/** One checkpointed step of a task's handler: its name within the run and the JSON it returned. */
export interface Checkpoint {
  name: string;
  /** The step's result as JSON text would give it back (`undefined` is stored as null). */
  value: unknown;
  createdAt: number;
}

/**
 * What a step's stored form (`{ value, …facts }`) keeps beside its result, for the task's timeline:
 * `ms`, how long the step's function ran; `attempt`, the run (as a cluster's claims count them)
 * that ran it, when a cluster worker did. Absent in checkpoints stored before they were kept.
 */
export interface StepFacts {
  ms?: number;
  attempt?: number;
}

/**
 * Durable execution (docs/durable-execution.md): the results of a handler's `ctx.step()` calls,
 * kept per task so a re-run after a crash gets them back instead of running the step again.
 *
 * The contract (checked by `src/testing/store-contract.ts` against every implementation):
 * - `saveCheckpoint` keeps the first write of a (task, name): a later write of the same name is
 *   ignored and returns false, so two runs racing on one step can never disagree about its result.
 * - A checkpoint of an unknown task is not kept (false); checkpoints go when their task is
 *   deleted (expiry sweep), and `dropCheckpoints` removes them all (a task re-run from scratch).
 */
export interface CheckpointStore {
  /**
   * Keeps `value` (JSON) as the result of step `name` of the task; false when one was already kept
   * or the task is unknown — or, with a `claim`, when that claim is no longer the task's current one.
   */
  saveCheckpoint(taskId: string, name: string, value: unknown, now: number, claim?: Claim): Promise<boolean>;

  /** Every checkpoint of the task, oldest first; empty for an unknown task. */
  checkpoints(taskId: string): Promise<Checkpoint[]>;

  /** Removes every checkpoint of the task; returns how many. */
  dropCheckpoints(taskId: string): Promise<number>;
}

/** Whether a store keeps durable-execution checkpoints (`ctx.step`, recovery "resume"). */
export function isCheckpointStore(store: TaskStore): store is TaskStore & CheckpointStore {
  const candidate = store as Partial<CheckpointStore>;
  return (
    typeof candidate.saveCheckpoint === "function" &&
    typeof candidate.checkpoints === "function" &&
    typeof candidate.dropCheckpoints === "function"
  );
}
