import type { TaskRecord } from "../core/task.js";

/** A wait of a run, as a tracer is told of it. */
export interface TracedWait {
  reason: "sleep" | "event" | "question";
  /** The event waited for (reason "event"). */
  eventName?: string;
  /** The question's method (reason "question"). */
  method?: string;
  /** When a sleep ends or an event wait times out (ms since the epoch). */
  until?: number;
}

/**
 * What the tracer keeps of the run that began a wait (its span's context), opaque to the engine:
 * stored with a parked wait, so whichever run resumes the task hands it back.
 */
export type WaitNote = Readonly<Record<string, string>>;

/** The start of a wait: when, and the tracer's note of the run that waited. */
export interface WaitBegan {
  at: number;
  note: WaitNote;
}

/** How a wait ended: when, and with what. */
export interface WaitEnded {
  at: number;
  outcome: "timer" | "timeout" | "event" | "answer";
}

/**
 * What the engine tells a tracer about the requests it serves and the waits of the runs it
 * executes, without knowing how traces are kept: the protocol binding implements it (and links the
 * request's span to the task's trace).
 */
export interface TaskTracing {
  /** A request found the task it names (get, cancel, a wait, an answer…), as the requestor may see it. */
  taskRead(task: TaskRecord): void;
  /**
   * A run of the task starts waiting (called in the run's context): the note to hand back at the
   * wait's end, or undefined when nothing is traced — then nothing is stored for the wait either.
   */
  waitBegan?(task: TaskRecord, wait: TracedWait): WaitNote | undefined;
  /**
   * A wait ended, told once per wait, in the context of the run that goes on past it: the run that
   * waited (`resumed` false), or — the run was parked meanwhile — the run that replayed the task
   * after the wake (`resumed` true).
   */
  waitEnded?(task: TaskRecord, wait: TracedWait, began: WaitBegan, ended: WaitEnded, resumed: boolean): void;
}

/** Traces nothing: the default. */
export const untraced: TaskTracing = { taskRead() {} };
