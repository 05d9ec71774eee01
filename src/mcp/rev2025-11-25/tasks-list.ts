import type { Caller } from "../../core/caller.js";
import type { TaskEngine } from "../../runtime/task-engine.js";
import type { LooseParams } from "../request-schemas.js";
import { toWireTask, type WireTask } from "../wire/rev2025-11-25/wire.js";

/** `tasks/list` (T-LIST): the caller's tasks only (T-SEC-3), opaque signed cursor (T-LIST-3, T-ERR-2). */
export async function tasksList(
  engine: TaskEngine,
  params: LooseParams,
  caller: Caller,
): Promise<{ tasks: WireTask[]; nextCursor?: string }> {
  const page = await engine.list(params?.["cursor"], caller);
  return {
    tasks: page.tasks.map(toWireTask),
    ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }),
  };
}
