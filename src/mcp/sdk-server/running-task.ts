import { AsyncLocalStorage } from "node:async_hooks";
import type { TaskRecord } from "../../core/task.js";
import type { TaskRunner } from "../../runtime/task-context.js";

/**
 * The task whose SDK callback is running, for what the callback's `extra` tells of the original
 * request that outlives a restart (its progress token, T-PROG-1). The tool adapter sees only the
 * ToolContext the shared runner builds; this carries the record beside it.
 */
const running = new AsyncLocalStorage<TaskRecord>();

/** The engine's runner with each run made inside its task's context. */
export function withRunningTask(runner: TaskRunner): TaskRunner {
  return (task, ctx) => running.run(task, () => runner(task, ctx));
}

/** The task running now, or undefined outside a run. */
export function runningTask(): TaskRecord | undefined {
  return running.getStore();
}
