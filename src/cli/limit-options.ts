/**
 * The quota flags (docs/limits.md), shared by `serve` and `worker`: the per-owner
 * limits are checked where tasks are created (a front), the per-run limits where handlers run
 * (a front with workers, or a worker process).
 */
import { Option } from "commander";
import {
  DEFAULT_MAX_ACTIVE_PER_OWNER,
  DEFAULT_MAX_QUEUED_INPUTS,
  DEFAULT_MAX_RESULT_BYTES,
  DEFAULT_MAX_STORED_PER_OWNER,
} from "../runtime/limits/quotas.js";
import { nonNegativeInt, positiveInt } from "./options.js";

/** Limits on what one requestor may create and keep. */
export interface TaskLimitFlags {
  maxActiveTasks: number;
  maxStoredTasks: number;
}

/** Limits on one run of a handler. */
export interface RunLimitFlags {
  maxQueuedInputs: number;
  maxResultBytes: number;
}

export function maxActiveTasksOption(): Option {
  return new Option("--max-active-tasks <n>", "unfinished tasks one requestor may have at once (else -32600)")
    .argParser(positiveInt)
    .default(DEFAULT_MAX_ACTIVE_PER_OWNER);
}

export function maxStoredTasksOption(): Option {
  return new Option("--max-stored-tasks <n>", "tasks one requestor may have stored, finished ones included until swept (else -32600)")
    .argParser(positiveInt)
    .default(DEFAULT_MAX_STORED_PER_OWNER);
}

export function maxQueuedInputsOption(): Option {
  return new Option(
    "--max-queued-inputs <n>",
    "unanswered elicitation/sampling requests one task may have queued (one more rejects in the tool)",
  )
    .argParser(positiveInt)
    .default(DEFAULT_MAX_QUEUED_INPUTS);
}

export function maxResultBytesOption(): Option {
  return new Option("--max-result-bytes <n>", "largest task result kept, in JSON bytes (over it the task fails)")
    .argParser(positiveInt)
    .default(DEFAULT_MAX_RESULT_BYTES);
}

/** The fair share (README "Fair share"): caps on what one requestor runs and queues. */
export interface FairShareFlags {
  maxRunningPerPrincipal?: number;
}

export function maxRunningPerPrincipalOption(): Option {
  return new Option(
    "--max-running-per-principal <n>",
    "handlers one requestor's tasks hold at once, across the cluster too; more wait queued (default: no cap)",
  ).argParser(positiveInt);
}

export function maxQueuedPerPrincipalOption(): Option {
  return new Option(
    "--max-queued-per-principal <n>",
    "tasks one requestor may have waiting for a handler; one more creation is refused at once (default: no bound)",
  ).argParser(positiveInt);
}

/** Retention (docs/limits.md): how long a finished task outlives its ttl. */
export interface RetentionFlags {
  keepFinished: number;
  rememberExpired: number;
}

export function keepFinishedOption(): Option {
  return new Option(
    "--keep-finished <ms>",
    "a finished task and its result stay fetchable at least this long after it ended, even past its ttl (in a cluster: the same on every node)",
  )
    .argParser(nonNegativeInt)
    .default(0);
}

export function rememberExpiredOption(): Option {
  return new Option(
    "--remember-expired <ms>",
    'how long the id of a task deleted after its retention still answers "Task has expired" rather than "Task not found" (0: forget at once)',
  )
    .argParser(nonNegativeInt)
    .default(24 * 60 * 60 * 1000);
}
