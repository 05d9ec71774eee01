import { RpcCode, TaskError } from "../core/errors.js";
import type { InputRequest, TaskOutcome, TaskRecord } from "../core/task.js";
import type { Logger } from "../core/logger.js";
import { retryOnStorageCondition } from "./storage-retry.js";
import { isCheckpointStore, type CheckpointStore } from "../store/checkpoint-store.js";
import type { TaskStore } from "../store/task-store.js";
import type { EngineObserver } from "./engine-observer.js";
import { reportLimitHit } from "./limits/quotas.js";
import { recoveryOf } from "./recovery-policy.js";
import { taskAuditFields } from "./task-audit.js";
import { claimFields, type Claim } from "../store/claim.js";
import type { WaitOutcome } from "../store/wait-store.js";
import type { StepFacts } from "../store/checkpoint-store.js";

interface JournalDeps {
  store: TaskStore;
  logger: Logger;
  observer: EngineObserver;
  now: () => number;
  /** Largest checkpointed step result, as JSON bytes (the same bound as a task's outcome). */
  maxResultBytes: number;
}

/** What a question of an earlier run that this run no longer asks is answered with. */
const ABANDONED: TaskOutcome = {
  kind: "error",
  error: { code: RpcCode.InternalError, message: "Superseded: the resumed task did not ask this again" },
};

/**
 * One run's memory of what earlier runs of its task left behind (docs/durable-execution.md): the checkpointed results of `step()` and the questions asked, by their
 * position in the run. Only tasks whose tool declared `recovery: "resume"` keep or replay
 * anything; for the others `step()` just runs its function and every question is new.
 *
 * Read lazily: a run that never calls `step()` or asks anything costs no query.
 */
export class RunJournal {
  private readonly store: (TaskStore & CheckpointStore) | null;
  private steps: Promise<Map<string, unknown>> | null = null;
  private readonly occurrences = new Map<string, number>();
  private earlierInputs: Promise<InputRequest[]> | null = null;
  private asked = 0;
  private replaying = true;

  constructor(
    private readonly deps: JournalDeps,
    private readonly task: TaskRecord,
    /** The claim the run holds (a worker of a cluster): its checkpoints and abandonments name it. */
    private readonly claim?: Claim,
  ) {
    const resumable = recoveryOf(task) === "resume";
    this.store = resumable && isCheckpointStore(deps.store) ? deps.store : null;
    if (resumable && this.store === null)
      deps.logger.warn({ taskId: task.id }, "the task store keeps no checkpoints: steps of this task will run again after a crash");
  }

  /** True when this run replays what earlier runs left (recovery "resume"). */
  get resumable(): boolean {
    return this.store !== null;
  }

  /**
   * Runs `fn` unless an earlier run of this task checkpointed the same step, whose result is then
   * returned instead. The n-th call with one name in a run is its own step (`name` #n), so a loop
   * of same-named steps replays step by step. The result travels through JSON (what a re-run would
   * get back), bounded by maxResultBytes; the first result stored for a step is the one every run
   * gets, even when two runs raced to it.
   */
  async step<T>(name: string, fn: () => Promise<T>): Promise<T> {
    if (typeof name !== "string" || name.length === 0 || name.length > 512) {
      throw new TypeError("ctx.step: the name must be a non-empty string of at most 512 characters");
    }
    // `$…` keys are the run's waits (`$sleep#1`, `$event:…#1`): a step of that name would replay as one.
    if (name.startsWith("$")) throw new TypeError('ctx.step: names starting with "$" are reserved for waits and their trace notes');
    const occurrence = (this.occurrences.get(name) ?? 0) + 1;
    this.occurrences.set(name, occurrence);
    const store = this.store;
    if (store === null) return fn();
    // `#n` after the name: the last `#` splits the key back unambiguously, whatever the name holds.
    const key = `${name}#${occurrence}`;
    const kept = await this.loadSteps(store);
    if (kept.has(key)) return unwrap(kept.get(key)) as T;
    const began = this.deps.now();
    const value = await fn();
    const stored = { ...this.checkStep(name, value), ...stepFacts(this.deps.now() - began, this.claim) };
    // A step that ran must not be lost to a full disk or a locked file: its side effects are done.
    const saved = await retryOnStorageCondition(
      () => store.saveCheckpoint(this.task.id, key, stored, this.deps.now(), this.claim),
      this.deps.logger,
      {
        taskId: this.task.id,
        step: key,
      },
    );
    if (!saved) {
      // Kept already: another run of this task got there first, and its result is the step's.
      const winner = (await store.checkpoints(this.task.id)).find((c) => c.name === key);
      if (winner !== undefined) {
        kept.set(key, winner.value);
        return unwrap(winner.value) as T;
      }
      // Not kept and no other run's either: this run's claim was superseded (its lease was lost).
      if (this.claim)
        this.deps.logger.warn(
          { ...claimFields(this.task.id, this.claim), dropped: "checkpoint", step: key },
          "write of a superseded claim dropped: the checkpoint was not stored",
        );
    }
    kept.set(key, stored);
    return unwrap(stored) as T;
  }

  /**
   * The question an earlier run asked at this position of the run, when it has the same method:
   * answered, its answer is replayed; unanswered, it is waited for again (the requestor still
   * sees the same request). Null when the question is new. The first question that differs ends
   * the replay: earlier questions left unanswered past it are answered with an error, so they stop
   * being delivered.
   */
  async earlierQuestion(method: string): Promise<InputRequest | null> {
    const position = this.asked++;
    if (this.store === null || !this.replaying) return null;
    const earlier = await (this.earlierInputs ??= this.store.inputs(this.task.id));
    // A concurrent question may have ended the replay while this one waited for the read.
    if (!this.replaying) return null;
    const input = earlier[position];
    if (input !== undefined && input.method === method) return input;
    this.replaying = false;
    for (const stale of earlier.slice(position)) {
      if (stale.answer === null) await this.store.answerInput(this.task.id, stale.id, ABANDONED, this.claim);
    }
    return null;
  }

  /** The key of this run's next wait of a kind (`$sleep`, `$event:<name>`): numbered per run like steps. */
  waitKey(prefix: string): string {
    const occurrence = (this.occurrences.get(prefix) ?? 0) + 1;
    this.occurrences.set(prefix, occurrence);
    return `${prefix}#${occurrence}`;
  }

  /** The outcome an earlier run's wait of this key left (replayed like a step), or null. */
  async waitOutcome(key: string): Promise<WaitOutcome | null> {
    if (this.store === null) return null;
    const kept = await this.loadSteps(this.store);
    return kept.has(key) ? ((unwrap(kept.get(key)) as WaitOutcome | undefined) ?? null) : null;
  }

  /** The value an earlier run kept under a run-internal key (`$…`, never a step's), or undefined. */
  async keptValue(key: string): Promise<unknown> {
    if (this.store === null) return undefined;
    const kept = await this.loadSteps(this.store);
    return kept.has(key) ? unwrap(kept.get(key)) : undefined;
  }

  /** The outcome of the wait of the same kind before `key` in this run, read from the store; null for the first. */
  async earlierWaitOutcome(prefix: string, key: string): Promise<WaitOutcome | null> {
    const occurrence = Number(key.slice(key.lastIndexOf("#") + 1));
    if (occurrence <= 1 || !isCheckpointStore(this.deps.store)) return null;
    const earlier = `${prefix}#${occurrence - 1}`;
    const found = (await this.deps.store.checkpoints(this.task.id)).find((c) => c.name === earlier);
    return found === undefined ? null : ((unwrap(found.value) as WaitOutcome | undefined) ?? null);
  }

  private loadSteps(store: CheckpointStore): Promise<Map<string, unknown>> {
    this.steps ??= store.checkpoints(this.task.id).then((all) => new Map(all.map((c) => [c.name, c.value])));
    return this.steps;
  }

  /** The step's result as stored: wrapped (so `undefined` survives), through JSON, within bounds. */
  private checkStep(name: string, value: unknown): { value?: unknown } {
    const { logger, observer, maxResultBytes } = this.deps;
    let json: string;
    try {
      json = JSON.stringify({ value });
    } catch (error) {
      logger.error({ taskId: this.task.id, step: name, err: error }, "step result is not serializable as JSON");
      throw new TaskError("internal", `The result of step "${name}" is not serializable as JSON`);
    }
    const bytes = Buffer.byteLength(json);
    if (bytes > maxResultBytes) {
      reportLimitHit(observer, logger, { limit: "result_bytes", ...taskAuditFields(this.task) });
      throw TaskError.limitExceeded("result_bytes", maxResultBytes, `The result of step "${name}" exceeds ${maxResultBytes} bytes`, {
        code: RpcCode.InternalError,
        data: { bytes, step: name },
      });
    }
    return JSON.parse(json) as { value?: unknown };
  }
}

/**
 * What a step's timeline shows beside its result, kept in the stored form next to `value` (which
 * alone is replayed): how long its function ran and, on a cluster worker, the attempt that ran it.
 * The JSON every store round-trips already, so no store needed a new column for it.
 */
function stepFacts(ms: number, claim: Claim | undefined): StepFacts {
  return { ms: Math.max(0, ms), ...(claim && { attempt: claim.attempt }) };
}

function unwrap(stored: unknown): unknown {
  return stored !== null && typeof stored === "object" ? (stored as { value?: unknown }).value : undefined;
}
