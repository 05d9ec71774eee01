import type { TaskRecord } from "../core/task.js";

/**
 * What the engine tells a tracer about the requests it serves, without knowing how traces are
 * kept: the protocol binding implements it (and links the request's span to the task's trace).
 */
export interface TaskTracing {
  /** A request found the task it names (get, cancel, a wait, an answer…), as the requestor may see it. */
  taskRead(task: TaskRecord): void;
}

/** Traces nothing: the default. */
export const untraced: TaskTracing = { taskRead() {} };
