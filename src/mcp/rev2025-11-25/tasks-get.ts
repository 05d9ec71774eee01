import type { Caller } from "../../core/caller.js";
import type { TaskEngine } from "../../runtime/task-engine.js";
import { requireTaskId, withOperation } from "../param-checks.js";
import type { LooseParams } from "../request-schemas.js";
import { toWireTask, type WireTask } from "../wire/rev2025-11-25/wire.js";

/** `tasks/get` (T-GET-1). Related-task `_meta` in the request is ignored (T-META-2); none in the result (T-META-3). */
export async function tasksGet(engine: TaskEngine, params: LooseParams, caller: Caller): Promise<WireTask> {
  const taskId = requireTaskId(params);
  try {
    return toWireTask(await engine.get(taskId, caller));
  } catch (error) {
    throw withOperation("Failed to retrieve task", error);
  }
}
