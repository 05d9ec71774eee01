import { RpcCode } from "../../core/errors.js";
import type { TaskRecord } from "../../core/task.js";
import type { EventBus } from "../../events/event-bus.js";
import type { TaskStore } from "../../store/task-store.js";
import type { Logger } from "../../core/logger.js";
import { taskAuditFields } from "../task-audit.js";
import { failInternally } from "../internal-failure.js";

export const INTERRUPTED_MESSAGE = "The server stopped while this task was running; it was not re-run because its tool is not marked retryable";

/**
 * At start, every non-terminal task in a single-node store belongs to a process that died with it
 * running. Such a task never stays stuck: a retryable one is returned to be re-run (at-least-once),
 * any other is failed with a statusMessage that says why. (Cluster mode replaces this with leases.)
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
      if (task.retryable) {
        // Requests the dead run asked for are void: the new run will ask again.
        for (const input of await store.pendingInputs(task.id)) {
          await store.answerInput(task.id, input.id, {
            kind: "error",
            error: { code: RpcCode.InternalError, message: "Superseded: the task was restarted" },
          });
        }
        const resumed =
          task.status === "input_required"
            ? await store.transition(task.id, ["input_required"], "working", { statusMessage: "Re-run after a server restart", now: now() })
            : task;
        if (resumed) {
          logger.warn({ audit: "rerun", ...taskAuditFields(task) }, "re-running a task interrupted by a restart");
          rerun.push(resumed);
          changed++;
        }
        continue;
      }
      if (await failInternally({ store, bus, logger, now }, task, "restart", INTERRUPTED_MESSAGE)) changed++;
    }
    // Stop once a page brings nothing new (only already-collected retryable tasks remain active).
    if (active.length < 500 || changed === 0) break;
  }
  return rerun;
}
