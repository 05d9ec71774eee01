import { isTerminal, type TaskStatus } from "../core/task-status.js";
import type { NewTask, TaskOutcome, TaskProgress, TaskRecord } from "../core/task.js";

/**
 * Wake-ups that travel between the parts of the engine (and, in cluster mode, between nodes).
 * Waiters treat them as hints and re-read the store, so a lost or duplicated event can delay an
 * answer but never make it wrong. A status event also carries what its transition wrote, so a
 * notification describes that transition even when the task has moved on since.
 */
export type TaskEvent =
  | {
      type: "status";
      taskId: string;
      status: TaskStatus;
      sessionId: string | null;
      /** What the transition wrote, with the task's fixed times: enough to describe the task as it was. */
      statusMessage: string | null;
      updatedAt: number;
      createdAt: number;
      ttlMs: number | null;
      pollIntervalMs: number | null;
      /** Set on the event of a task's creation (it starts in `working`, T-LIFE-1: not a change). */
      created?: true;
      /**
       * Set on a move to a terminal status: the outcome it stored (null when none, as for a
       * cancel), so a blocked `tasks/result` answers without reading it back. Absent when it was
       * too large to travel between nodes: the waiter then reads the store.
       */
      outcome?: TaskOutcome | null;
    }
  | { type: "input"; taskId: string; inputId: string }
  | { type: "answer"; taskId: string; inputId: string }
  | { type: "progress"; taskId: string; sessionId: string | null; progressToken: string | number | null; progress: TaskProgress }
  /** A handler's log message (its level is the binding's vocabulary), heard where its progress is. */
  | { type: "log"; taskId: string; sessionId: string | null; level: string; data: unknown; logger?: string }
  | { type: "cancel"; taskId: string; reason: string }
  /** "Re-read the store": sent when events may have been missed (e.g. a bus reconnected). */
  | { type: "wake"; taskId: string }
  /**
   * A requestor's JSON-RPC response to a request another node sent (cluster HTTP without sticky
   * sessions). Routed by `taskId` = "node:<id of the node that sent the request>"; `sessionId` is
   * the session it was POSTed on, which must be the one the request went to (T-SEC-3).
   */
  | { type: "reply"; taskId: string; message: unknown; sessionId: string };

/** The status event of a transition, from the record the store returned for it. */
export function statusEvent(task: TaskRecord, created = false): Extract<TaskEvent, { type: "status" }> {
  return {
    type: "status",
    taskId: task.id,
    status: task.status,
    sessionId: task.origin.sessionId,
    statusMessage: task.statusMessage,
    updatedAt: task.updatedAt,
    createdAt: task.createdAt,
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
    ...(created && { created: true as const }),
    ...(isTerminal(task.status) && { outcome: task.outcome }),
  };
}

/**
 * The creation event of a task about to be stored: {@link statusEvent} of the record the store
 * will return for it (`working`, no message, updated when created), known before the write so
 * that the write can carry it (runtime/carried-notify.ts).
 */
export function createdEvent(task: NewTask): Extract<TaskEvent, { type: "status" }> {
  return {
    type: "status",
    taskId: task.id,
    status: "working",
    sessionId: task.origin.sessionId,
    statusMessage: null,
    updatedAt: task.createdAt,
    createdAt: task.createdAt,
    ttlMs: task.ttlMs,
    pollIntervalMs: task.pollIntervalMs,
    created: true,
  };
}
