import { RpcCode } from "../../core/errors.js";
import type { TaskRecord } from "../../core/task.js";
import type { EventBus } from "../../events/event-bus.js";
import { isCheckpointStore } from "../../store/checkpoint-store.js";
import type { TaskStore } from "../../store/task-store.js";
import type { Logger } from "../../core/logger.js";
import { taskAuditFields } from "../task-audit.js";
import { failInternally } from "../internal-failure.js";
import { recoveryOf, type RecoveryPolicy } from "../recovery-policy.js";
import { wasHandedBack } from "../drain.js";
import { statusEvent } from "../../events/task-event.js";
import { isRunQueueStore } from "../../store/run-queue.js";

/**
 * Tasks keep the recovery they were created with (a tool's new declaration applies to new tasks),
 * so the message names the declaration the task was created under, not the tool's current one.
 */
export const INTERRUPTED_MESSAGE =
  'The server stopped while this task was running; it was not re-run because it was created when its tool declared no recovery ("resume" or "retry")';

/** The statusMessage of a task a crash interrupted, as the next start resumes it (recovery "resume"). */
export const RESUMED_MESSAGE = "Resumed after a server restart";

/** The statusMessage of a task a crash interrupted, as the next start re-runs it from scratch (recovery "retry"). */
export const RERUN_MESSAGE = "Re-run after a server restart";

/** The statusMessage of a task a drain handed back, once the next start re-runs it. */
export const HANDED_BACK_RERUN_MESSAGE = "Re-run after the server that was running it drained";

/**
 * At start, every non-terminal task in a single-node store belongs to a process that stopped with
 * it running. Such a task never stays stuck (docs/durable-execution.md). One that process's drain
 * handed back (an orderly stop: the handler was aborted, nothing of it half-written) is re-run
 * whatever its tool's recovery, its checkpoints and questions kept — as a cluster's other worker
 * re-runs what a draining worker hands back. One left by a crash follows its tool's recovery:
 * - recovery "resume": returned to be re-run with its checkpoints and its questions kept — an
 *   unanswered one stays pending and is delivered again when the new run asks it;
 * - recovery "retry": returned to be re-run from scratch, its checkpoints and pending questions void;
 * - otherwise failed with a statusMessage that says why.
 * Tasks still waiting in a store's queue were never started: they are left to wait.
 * (Cluster mode replaces this with leases.)
 */
export async function recoverInterruptedTasks(store: TaskStore, bus: EventBus, logger: Logger, now: () => number): Promise<TaskRecord[]> {
  const rerun: TaskRecord[] = [];
  for (;;) {
    // A store that keeps a queue tells started tasks from queued ones: only the started were interrupted.
    const active = isRunQueueStore(store) ? await store.startedTasks(500) : await store.activeTasks(500);
    let changed = 0;
    for (const task of active) {
      if (rerun.some((t) => t.id === task.id)) continue;
      const handedBack = wasHandedBack(task);
      // A handed-back task is re-run as a cluster re-runs it: checkpoints and questions kept.
      const policy: RecoveryPolicy = handedBack ? "resume" : recoveryOf(task);
      if (policy === "fail") {
        if (await failInternally({ store, bus, logger, now }, task, "restart", INTERRUPTED_MESSAGE)) changed++;
        continue;
      }
      if (policy === "retry") {
        // Requests the dead run asked for are void: the new run will ask again.
        for (const input of await store.pendingInputs(task.id)) {
          await store.answerInput(task.id, input.id, {
            kind: "error",
            error: { code: RpcCode.InternalError, message: "Superseded: the task was restarted" },
          });
        }
        if (isCheckpointStore(store)) await store.dropCheckpoints(task.id);
      }
      // Back to working until the new run asks (again): a resumed question moves it back to
      // input_required when the run reaches it.
      const message = handedBack ? HANDED_BACK_RERUN_MESSAGE : policy === "resume" ? RESUMED_MESSAGE : RERUN_MESSAGE;
      // A handed-back task's mark goes: should this run be cut short by a crash, the tool's
      // recovery applies. Either way the new run starts on the task's timeline (a working task's
      // status is unchanged, so only a marked annotate puts it there).
      const resumed: TaskRecord | null =
        task.status === "input_required"
          ? await store.transition(task.id, ["input_required"], "working", { statusMessage: message, now: now() })
          : (await store.annotate(task.id, { statusMessage: message, now: now(), timeline: true }))
            ? { ...task, statusMessage: message }
            : null;
      if (resumed) {
        const audit = handedBack ? { audit: "rerun", handedBack: true } : { audit: policy === "resume" ? "resumed" : "rerun" };
        logger.warn(
          { ...audit, ...taskAuditFields(task) },
          handedBack
            ? "re-running a task the last drain handed back"
            : `${policy === "resume" ? "resuming" : "re-running"} a task interrupted by a restart`,
        );
        if (resumed !== task) bus.publish(statusEvent(resumed));
        rerun.push(resumed);
        changed++;
      }
    }
    // Stop once a page brings nothing new (only already-collected re-runnable tasks remain active).
    if (active.length < 500 || changed === 0) break;
  }
  return rerun;
}
