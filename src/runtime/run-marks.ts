import type { StatusChange } from "../core/task.js";
import { isTerminal } from "../core/task-status.js";
import { HANDED_BACK_LOCAL_MESSAGE, HANDED_BACK_MESSAGE } from "./drain.js";
import { HANDED_BACK_RERUN_MESSAGE, INTERRUPTED_MESSAGE, RERUN_MESSAGE, RESUMED_MESSAGE } from "./upkeep/recovery.js";

/** How a run of a task ended: its handler returned or the task was cancelled or failed; a drain handed it back; its process or worker was lost. */
export type RunEnd = "finished" | "drained" | "lost" | "running";

/** How a run began: the task's creation, or a re-run of it after the run before ended (resumed: with its checkpoints). */
export type RunStart = "created" | "re-run" | "resumed";

/** One run of a task, as its status timeline tells it. */
export interface TaskRun {
  /** 1 for the first run. */
  attempt: number;
  startedBy: RunStart;
  startedAt: number;
  /** Null while it runs. */
  endedAt: number | null;
  ended: RunEnd;
  /** The status message of the entry that ended it (the outcome's, or what the drain or the reaper wrote), or null. */
  endMessage: string | null;
  /**
   * The cluster worker that ran it, as its timeline entries name it (the last one that held the
   * task: a run parked and woken may move between workers); null when none names one (a single
   * node, or a run no worker has written for yet).
   */
  node: string | null;
}

/**
 * The cluster's re-queue of a lost worker's task is written in SQL (store/postgres/lease-statements.ts):
 * its message starts so.
 */
const REQUEUED_PREFIX = "The worker running this task stopped renewing its lease; the task was queued to run again";

/** What a timeline entry says about the task's runs: the start of a new run, the end of one, or nothing. */
function markOf(change: StatusChange): { starts?: RunStart; ends?: RunEnd } {
  const message = change.statusMessage ?? "";
  if (message === RESUMED_MESSAGE) return { starts: "resumed", ends: "lost" };
  if (message === RERUN_MESSAGE) return { starts: "re-run", ends: "lost" };
  // A single node's drain marks the end; the next start's re-run begins the next run.
  if (message === HANDED_BACK_LOCAL_MESSAGE) return { ends: "drained" };
  if (message === HANDED_BACK_RERUN_MESSAGE) return { starts: "resumed", ends: "drained" };
  // A cluster's hand-back and re-queue put the task back in the queue: the next claim is the next run.
  if (message === HANDED_BACK_MESSAGE) return { starts: "resumed", ends: "drained" };
  if (message.startsWith(REQUEUED_PREFIX)) return { starts: "re-run", ends: "lost" };
  if (isTerminal(change.status)) return { ends: change.status === "failed" && message === INTERRUPTED_MESSAGE ? "lost" : "finished" };
  return {};
}

/**
 * The runs of a task, from its status timeline (oldest first): every start and end of a run that
 * changes no status is on it too, marked (TaskStore.annotate with `timeline`): a restart's re-run,
 * a drain's hand-back; a cluster's re-queue and hand-back are status writes of their own.
 */
export function runsOf(history: readonly StatusChange[]): TaskRun[] {
  const runs: TaskRun[] = [];
  const end = (run: TaskRun | undefined, change: StatusChange, ended: RunEnd): void => {
    // A run ended already (a single node's hand-back, before the next start) keeps its reason.
    if (run === undefined || run.ended !== "running") return;
    Object.assign(run, { endedAt: change.at, ended, endMessage: change.statusMessage });
  };
  const start = (startedBy: RunStart, at: number): void => {
    runs.push({ attempt: runs.length + 1, startedBy, startedAt: at, endedAt: null, ended: "running", endMessage: null, node: null });
  };
  for (const [index, change] of history.entries()) {
    if (index === 0) {
      start("created", change.at);
      continue;
    }
    // The entry's worker belongs to the run it is written in (an entry that ends one run and
    // starts the next, a re-queue, names the worker that lost the run).
    const current = runs.at(-1);
    if (change.node !== undefined && current !== undefined && current.ended === "running") current.node = change.node;
    const mark = markOf(change);
    if (mark.ends !== undefined) end(current, change, mark.ends);
    if (mark.starts !== undefined) start(mark.starts, change.at);
  }
  return runs;
}
