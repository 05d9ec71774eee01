/**
 * A task's whole history on one timeline (`GET /tasks/api/tasks/:id/timeline`, the detail panel's
 * Timeline, `mcp-tasks tasks get --history`): its status changes, its runs, its steps, its
 * questions, its waits and its webhook deliveries. Built from what the store keeps with the task
 * (status history, checkpoints, inputs, waits, outbox), so it lives exactly as long as the task.
 */
import type { StatusChange, TaskOutcome, TaskRecord } from "../core/task.js";
import { runsOf, type TaskRun } from "../runtime/run-marks.js";
import type { TaskReadPort } from "../runtime/task-read-port.js";
import { displayUrl } from "../runtime/outbound/outbound-post.js";
import type { Checkpoint, StepFacts } from "../store/checkpoint-store.js";
import type { OutboxStore } from "../store/outbox-store.js";
import type { WaitOutcome, WaitRecord } from "../store/wait-store.js";
import { REDACTED, toSummary, type Redaction, type TaskSummary } from "./task-view.js";

/**
 * A run, and the cluster worker that ran it (`node`): for a run that ended, the last worker its
 * timeline entries name; for a running one, the worker that holds it now. Null on a single node.
 */
export type RunView = TaskRun;

export interface StepView {
  /** The name given to `ctx.step`. */
  name: string;
  /** Which call of that name in a run (1 for the first). */
  occurrence: number;
  /** When its result was stored (the step's end). */
  at: number;
  /** How long its function ran; null for a step stored before durations were kept. */
  ms: number | null;
  /** The run that ran it (the cluster's attempt, else the run whose time holds it). */
  attempt: number | null;
  /** Size of the stored result, as JSON bytes. */
  bytes: number;
}

export interface QuestionView {
  id: string;
  method: string;
  askedAt: number;
  /** The question and its answer, unless the server redacts the input exchange. */
  params: unknown;
  answer: TaskOutcome | null;
}

export interface WaitView {
  kind: "timer" | "event";
  /** The event's name (kind "event"). */
  event: string | null;
  /** When the run began to wait; null for a satisfied wait (its start is not kept, its end is). */
  since: number | null;
  /** When a timer fires or an event wait times out; null: no deadline, or satisfied. */
  dueAt: number | null;
  /** waiting, or how it ended: the timer fired, the event came, or the wait timed out. */
  state: "waiting" | "timer" | "event" | "timeout";
  /** When it ended (satisfied waits). */
  at: number | null;
  /** While waiting: whether the task is parked (its handler unloaded until it is satisfied). */
  parked: boolean;
}

export interface DeliveryView {
  id: string;
  type: string;
  url: string;
  state: string;
  attempts: number;
  /** When the transition it reports was written. */
  at: number;
  lastStatus: number | null;
  lastError: string | null;
  lastAttemptAt: number | null;
}

export interface TaskTimeline {
  task: TaskSummary;
  status: StatusChange[];
  runs: RunView[];
  steps: StepView[];
  questions: QuestionView[];
  waits: WaitView[];
  /** Null when the server's store keeps no webhook deliveries. */
  webhooks: DeliveryView[] | null;
}

/** Most webhook deliveries of one task shown. */
const MAX_DELIVERIES = 200;

/** Reads and assembles the timeline of a task the caller may see (already checked). */
export async function taskTimeline(
  inspect: TaskReadPort,
  outbox: OutboxStore | null,
  task: TaskRecord,
  redaction: Redaction,
): Promise<TaskTimeline> {
  const [history, inputs, checkpoints, pending, deliveries, cluster] = await Promise.all([
    inspect.history(task.id),
    inspect.inputs(task.id),
    inspect.checkpoints(task.id),
    inspect.waits(task.id),
    outbox === null ? null : outbox.deliveries({ taskId: task.id }, MAX_DELIVERIES),
    inspect.clusterView(Date.now()),
  ]);
  const runs: RunView[] = runsOf(history);
  const lease = cluster?.leases.find((held) => held.taskId === task.id);
  const current = runs.at(-1);
  if (lease !== undefined && current !== undefined && current.ended === "running") current.node = lease.workerId;
  const steps: StepView[] = [];
  const waits: WaitView[] = [];
  for (const checkpoint of checkpoints) {
    const { name, occurrence } = splitKey(checkpoint.name);
    if (name.startsWith("$")) waits.push(satisfiedWait(name, checkpoint));
    else steps.push(stepOf(name, occurrence, checkpoint, runs));
  }
  for (const wait of pending) waits.push(pendingWait(wait, task));
  return {
    task: toSummary(task),
    status: history,
    runs,
    steps,
    questions: inputs.map((input) => ({
      id: input.id,
      method: input.method,
      askedAt: input.createdAt,
      params: redaction.inputs ? REDACTED : input.params,
      answer: input.answer === null ? null : redaction.inputs ? { kind: "result", value: REDACTED } : input.answer,
    })),
    waits: waits.sort((a, b) => (a.since ?? a.at ?? 0) - (b.since ?? b.at ?? 0)),
    webhooks:
      deliveries === null
        ? null
        : deliveries
            .map((row) => ({
              id: row.id,
              type: row.type,
              url: displayUrl(row.url),
              state: row.state,
              attempts: row.attempts,
              at: row.at,
              lastStatus: row.lastStatus,
              lastError: row.lastError,
              lastAttemptAt: row.lastAttemptAt,
            }))
            .sort((a, b) => a.at - b.at),
  };
}

/** `name#n` → name and n; the last `#` splits it (a step's name may hold one). */
function splitKey(key: string): { name: string; occurrence: number } {
  const hash = key.lastIndexOf("#");
  return hash < 0 ? { name: key, occurrence: 1 } : { name: key.slice(0, hash), occurrence: Number(key.slice(hash + 1)) || 1 };
}

function stepOf(name: string, occurrence: number, checkpoint: Checkpoint, runs: readonly TaskRun[]): StepView {
  const stored = (checkpoint.value ?? {}) as { value?: unknown } & StepFacts;
  const inRun = runs.findLast((run) => run.startedAt <= checkpoint.createdAt);
  return {
    name,
    occurrence,
    at: checkpoint.createdAt,
    ms: typeof stored.ms === "number" ? stored.ms : null,
    attempt: typeof stored.attempt === "number" ? stored.attempt : (inRun?.attempt ?? null),
    bytes: Buffer.byteLength(JSON.stringify(stored.value ?? null)),
  };
}

/** A wait's checkpoint: `$sleep` or `$event:<name>`, its outcome as the value. */
function satisfiedWait(name: string, checkpoint: Checkpoint): WaitView {
  const outcome = (checkpoint.value as { value?: WaitOutcome } | null)?.value;
  const event = name.startsWith("$event:") ? name.slice("$event:".length) : null;
  return {
    kind: event === null ? "timer" : "event",
    event,
    since: null,
    dueAt: null,
    state: outcome?.fired ?? "timer",
    at: outcome?.at ?? checkpoint.createdAt,
    parked: false,
  };
}

function pendingWait(wait: WaitRecord, task: TaskRecord): WaitView {
  return {
    kind: wait.kind,
    event: wait.eventName,
    since: wait.createdAt,
    dueAt: wait.dueAt,
    state: "waiting",
    at: null,
    parked: task.waitMode === "parked",
  };
}
