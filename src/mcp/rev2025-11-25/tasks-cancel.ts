import type { Caller } from "../../core/caller.js";
import type { TaskEngine } from "../../runtime/task-engine.js";
import { requireTaskId, withOperation } from "../param-checks.js";
import type { LooseParams } from "../request-schemas.js";
import { toWireTask, type WireTask } from "../wire/rev2025-11-25/wire.js";

/** `tasks/cancel` (T-CANCEL-1..3): answers with the task already `cancelled`. */
export async function tasksCancel(engine: TaskEngine, params: LooseParams, caller: Caller): Promise<WireTask> {
  const taskId = requireTaskId(params);
  try {
    return toWireTask(await engine.cancel(taskId, caller));
  } catch (error) {
    throw withOperation("Failed to cancel task", error);
  }
}
