import type { TaskStatus } from "../core/task-status.js";
import type { TaskProgress } from "../core/task.js";

/**
 * Wake-ups that travel between the parts of the engine (and, in cluster mode, between nodes).
 * They carry ids, not state: a receiver re-reads the store, so a lost or duplicated event can
 * delay an answer but never make it wrong.
 */
export type TaskEvent =
  | { type: "status"; taskId: string; status: TaskStatus; sessionId: string | null }
  | { type: "input"; taskId: string; inputId: string }
  | { type: "answer"; taskId: string; inputId: string }
  | { type: "progress"; taskId: string; sessionId: string | null; progressToken: string | number | null; progress: TaskProgress }
  | { type: "cancel"; taskId: string; reason: string }
  /** "Re-read the store": sent when events may have been missed (e.g. a bus reconnected). */
  | { type: "wake"; taskId: string };
