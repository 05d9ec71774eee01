import { RpcCode } from "../../core/errors.js";
import type { TaskRecord } from "../../core/task.js";
import type { EventBus } from "../../events/event-bus.js";
import { isCheckpointStore } from "../../store/checkpoint-store.js";
import type { TaskStore } from "../../store/task-store.js";
import type { Logger } from "../../core/logger.js";
import { taskAuditFields } from "../task-audit.js";
import { failInternally } from "../internal-failure.js";
import { recoveryOf } from "../recovery-policy.js";
import { statusEvent } from "../../events/task-event.js";

export const INTERRUPTED_MESSAGE =
  'The server stopped while this task was running; it was not re-run because its tool declares no recovery ("resume" or "retry")';

/**
 * At start, every non-terminal task in a single-node store belongs to a process that died with it
 * running. Such a task never stays stuck (README "Durable execution"):
 * - recovery "resume": returned to be re-run with its checkpoints and its questions kept — an
 *   unanswered one stays pending and is delivered again when the new run asks it;
 * - recovery "retry": returned to be re-run from scratch, its checkpoints and pending questions void;
 * - otherwise failed with a statusMessage that says why.
 * (Cluster mode replaces this with leases.)
 */
export async function recoverInterruptedTasks(
  store: TaskStore,
  bus: EventBus,
  logger: Logger,
  now: () => number,
): Promise<TaskRecord[]> {
  const rerun: TaskRecord[] = [];
  for (;;) {
    const active = await store.activeTasks(500);
    let changed = 0;
    for (const task of active) {
      if (rerun.some((t) => t.id === task.id)) continue;
      const policy = recoveryOf(task);
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
      const message = policy === "resume" ? "Resumed after a server restart" : "Re-run after a server restart";
      const resumed =
        task.status === "input_required"
          ? await store.transition(task.id, ["input_required"], "working", { statusMessage: message, now: now() })
          : task;
      if (resumed) {
        logger.warn({ audit: policy === "resume" ? "resumed" : "rerun", ...taskAuditFields(task) }, `${policy === "resume" ? "resuming" : "re-running"} a task interrupted by a restart`);
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
