/**
 * The engine's operations, as its audit lines, limit reports and refusals name them. Each
 * protocol era maps its own requests onto these; the engine never learns a wire method's name.
 */
export type EngineOperation =
  /** A task is created for a request. */
  | "create"
  | "get"
  | "list"
  | "cancel"
  /** Waiting for a task's outcome (the answer of a blocking result request). */
  | "result"
  /** Following a task's changes until it ends (a subscription). */
  | "watch"
  /** The open questions a task has asked its requestor. */
  | "inputs"
  /** The requestor answering one of them. */
  | "respond";
