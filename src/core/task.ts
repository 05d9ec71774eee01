import { isTerminal, type TaskStatus } from "./task-status.js";

/** A JSON-RPC error as it travels on the wire: kept verbatim so `tasks/result` can replay it (T-RES-4). */
export interface RpcErrorShape {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * How the underlying request ended. Stored once, with the terminal transition, and never
 * rewritten afterwards (T-LIFE-3, T-CANCEL-4).
 */
export type TaskOutcome = { kind: "result"; value: unknown } | { kind: "error"; error: RpcErrorShape };

/**
 * Where a task came from, as far as delivering things back to its requestor needs. Plain data so
 * any node of a cluster can act on it.
 */
export interface TaskOrigin {
  /** Transport session that created the task, when the transport has sessions. */
  sessionId: string | null;
  /** The original request's progress token, valid for the task's whole life (T-PROG-1). */
  progressToken: string | number | null;
  /** Request methods the requestor declared it can answer (e.g. "elicitation/create"). */
  accepts: string[];
  /** The address the task was created from, for the audit lines of what happens to it later (T-SEC-5). */
  peer?: string;
  /**
   * The protocol era whose request created the task (its id, e.g. "2026-07-28"); absent for tasks
   * created by a 2025-11-25 session, which predate the field. Every era serves every task (the
   * record is era-neutral); this says where it came from, for the audit and the web view.
   */
  era?: string;
  /**
   * "resume" when the task's tool declared `recovery: "resume"`: after a crash it re-runs with its
   * checkpoints and stored answers replayed (docs/durable-execution.md). Absent otherwise; then
   * `retryable` alone says whether it re-runs (from scratch) or fails. Kept here, in the JSON every
   * store already round-trips, so no store needed a new column for it.
   */
  recovery?: "resume";
  /**
   * The creating request's trace context, as a propagator wrote it (W3C Trace Context fields by
   * name), so whichever process runs, resumes or serves the task continues or links to the same
   * trace. Opaque here: only the binding reads or writes it. Absent when the request was not traced.
   */
  trace?: Readonly<Record<string, string>>;
  /**
   * The webhook endpoints that hear this task's events, decided at creation (docs/webhooks.md).
   * A store turns them into outbox rows in the same write as each transition they report. Kept
   * in the JSON every store already round-trips, as `recovery` is.
   */
  webhooks?: WebhookRoute[];
  /**
   * The finished task this one re-runs (the web view's re-run and bulk retry), so the new task
   * links back to the old one. Kept in the JSON every store already round-trips, as `recovery` is.
   */
  rerunOf?: string;
}

/** One endpoint subscribed to a task's events (see {@link TaskOrigin.webhooks}). */
export interface WebhookRoute {
  /** Where the events go. */
  url: string;
  /** The configured endpoint (or per-task prefix) whose secret and rules apply. */
  endpoint: string;
  /** The event types it wants ("task.completed", …). */
  events: string[];
}

/** What the runtime hands a store to create a task. Always created in `working` (T-LIFE-1). */
export interface NewTask {
  id: string;
  /** Owner key derived from the authorization context; null when the transport has none (T-SEC-2). */
  owner: string | null;
  /** What to run: the request method ("tools/call", …). */
  method: string;
  /** Short name for humans and filters (the tool's name for tools/call). */
  name: string;
  /** The request params as received, minus the task augmentation; enough to re-run the task. */
  request: unknown;
  origin: TaskOrigin;
  createdAt: number;
  /** Actual lifetime in ms from createdAt (T-TTL-3/4); null means unlimited. */
  ttlMs: number | null;
  pollIntervalMs: number | null;
  /**
   * The handler declared itself safe to run again after a crash (at-least-once): recovery "retry"
   * or "resume" (see {@link TaskOrigin.recovery}).
   */
  retryable: boolean;
}

/** A task as stored, in protocol-neutral terms. The `mcp` layer maps it to the wire `Task`. */
export interface TaskRecord extends NewTask {
  status: TaskStatus;
  statusMessage: string | null;
  updatedAt: number;
  /** createdAt + ttlMs, or null when unlimited. */
  expiresAt: number | null;
  outcome: TaskOutcome | null;
  /** Last progress report, kept so a late observer can see where the task is. */
  progress: TaskProgress | null;
  /**
   * Which run of the task this is (1 for the first), set only on a task a cluster worker has just
   * claimed: the store counts claims, so a re-run after a lost worker says so in its trace.
   */
  attempt?: number;
  /**
   * Set while the task holds no handler slot because it waits (see `WaitMode` in
   * store/wait-store.ts): "parked" (unloaded, woken by the store) or "memory" (its handler waits in
   * the process that runs it). Absent or null: queued, running, or finished.
   */
  waitMode?: "memory" | "parked" | null;
}

/** A task's latest progress, as `notifications/progress` carries it. */
export interface TaskProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** A request the receiver needs the requestor to answer before the task can go on (T-INPUT). */
export interface InputRequest {
  taskId: string;
  /** Unique within the task. */
  id: string;
  method: string;
  params: unknown;
  createdAt: number;
  /** Set once, when the requestor's answer (a result or a JSON-RPC error) arrives. */
  answer: TaskOutcome | null;
}

/**
 * One entry of a task's status timeline: the status it entered, when, and the statusMessage written
 * with it. Stores append one with every status write (creation included), in the same atomic write.
 */
export interface StatusChange {
  status: TaskStatus;
  statusMessage: string | null;
  at: number;
  /**
   * The cluster worker that held the task when the change was written (its worker id); absent
   * when none did: a single node, a change written by a front to a queued or parked task.
   */
  node?: string;
}

export function expiresAt(createdAt: number, ttlMs: number | null): number | null {
  return ttlMs === null ? null : createdAt + ttlMs;
}

/**
 * Until when the task stays fetchable: its expiresAt, or for a finished task at least
 * `keepFinishedMs` after it ended (a terminal task's updatedAt never moves again); null = forever.
 */
export function retainedUntil(task: Pick<TaskRecord, "expiresAt" | "status" | "updatedAt">, keepFinishedMs = 0): number | null {
  if (task.expiresAt === null) return null;
  return isTerminal(task.status) ? Math.max(task.expiresAt, task.updatedAt + keepFinishedMs) : task.expiresAt;
}

/**
 * Past its retention, so a lookup answers "Task has expired". Never a task that has not ended: one
 * still running at its ttl is about to be failed by the sweeper, and that outcome is kept
 * `keepFinishedMs` like any other; until then it reads as it is, and its key still names it.
 */
export function isExpired(task: Pick<TaskRecord, "expiresAt" | "status" | "updatedAt">, now: number, keepFinishedMs = 0): boolean {
  if (!isTerminal(task.status)) return false;
  const until = retainedUntil(task, keepFinishedMs);
  return until !== null && until <= now;
}
