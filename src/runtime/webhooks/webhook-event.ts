/**
 * The events a task's transitions produce and the JSON body a delivery carries: Standard
 * Webhooks' `{type, timestamp, data}`, with `data` naming the task in the words of the MCP `Task`
 * (taskId, status, statusMessage, createdAt, lastUpdatedAt, ttl, pollInterval) plus the tool.
 */
import type { TaskStatus } from "../../core/task-status.js";
import type { TaskOutcome, TaskRecord } from "../../core/task.js";

export const WEBHOOK_EVENT_TYPES = ["task.input_required", "task.completed", "task.failed", "task.cancelled"] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The event a move into `status` produces, or null (`working` produces none). */
export function eventTypeOf(status: TaskStatus): WebhookEventType | null {
  return status === "working" ? null : `task.${status}`;
}

/** What the outbox keeps of the transition, taken in the same write (later changes do not alter it). */
export interface TransitionSnapshot {
  status: TaskStatus;
  statusMessage: string | null;
  at: number;
}

/** The `data` of an event. */
export interface WebhookEventData {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  tool: string;
  /** Only for subscriptions that cover every principal (an endpoint of one principal knows whose it is). */
  owner?: string | null;
  createdAt: string;
  lastUpdatedAt: string;
  ttl: number | null;
  pollInterval?: number;
  /** The tool's result, only when the subscription asks for it and it fits its size limit. */
  result?: unknown;
  /** The JSON-RPC error a failed task ended with, under the same conditions as `result`. */
  error?: unknown;
  /** True when the subscription asked for the result but it was larger than its limit: fetch it with tasks/result. */
  resultOmitted?: true;
}

export interface WebhookEventBody {
  type: WebhookEventType;
  timestamp: string;
  data: WebhookEventData;
}

/** How much of a task an event carries. */
export interface EventShape {
  includeOwner: boolean;
  /** Bytes of JSON up to which the outcome is carried; absent = never. */
  includeResultUpTo?: number;
}

/** The body of the event `type` for `task` at the transition `snapshot`, as the JSON text that is signed and sent. */
export function eventBody(type: WebhookEventType, task: TaskRecord, snapshot: TransitionSnapshot, shape: EventShape): string {
  const data: WebhookEventData = {
    taskId: task.id,
    status: snapshot.status,
    ...(snapshot.statusMessage === null ? {} : { statusMessage: snapshot.statusMessage }),
    tool: task.name,
    ...(shape.includeOwner ? { owner: task.owner } : {}),
    createdAt: new Date(task.createdAt).toISOString(),
    lastUpdatedAt: new Date(snapshot.at).toISOString(),
    ttl: task.ttlMs,
    ...(task.pollIntervalMs === null ? {} : { pollInterval: task.pollIntervalMs }),
    ...outcomeFields(snapshot.status, task.outcome, shape.includeResultUpTo),
  };
  const body: WebhookEventBody = { type, timestamp: new Date(snapshot.at).toISOString(), data };
  return JSON.stringify(body);
}

function outcomeFields(status: TaskStatus, outcome: TaskOutcome | null, limit: number | undefined): Partial<WebhookEventData> {
  if (limit === undefined || outcome === null || (status !== "completed" && status !== "failed")) return {};
  const field = outcome.kind === "result" ? { result: outcome.value } : { error: outcome.error };
  return Buffer.byteLength(JSON.stringify(field)) <= limit ? field : { resultOmitted: true };
}
