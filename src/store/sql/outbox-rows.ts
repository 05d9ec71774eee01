/** The webhook outbox's rows as both SQL stores return them (same column names). */
import type { TaskStatus } from "../../core/task-status.js";
import type { ClaimedDelivery, DeliveryState, OutboxDelivery } from "../outbox-store.js";

export interface OutboxRow {
  seq: number;
  id: string;
  task_id: string;
  url: string;
  endpoint: string;
  type: string;
  status: string;
  status_message: string | null;
  at: number;
  owner: string | null;
  name: string;
  created_at: number;
  ttl_ms: number | null;
  poll_interval_ms: number | null;
  trace: string | null;
  state: string;
  attempts: number;
  next_attempt_at: number;
  last_status: number | null;
  last_error: string | null;
  last_attempt_at: number | null;
  lease_owner: string | null;
  lease_generation: number;
}

function traceOf(text: string | null): Readonly<Record<string, string>> | null {
  if (text === null) return null;
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null ? (value as Record<string, string>) : null;
  } catch {
    return null;
  }
}

export function deliveryFromRow(row: OutboxRow): OutboxDelivery {
  return {
    id: row.id,
    seq: Number(row.seq),
    taskId: row.task_id,
    url: row.url,
    endpoint: row.endpoint,
    type: row.type,
    status: row.status as TaskStatus,
    statusMessage: row.status_message,
    at: Number(row.at),
    owner: row.owner,
    name: row.name,
    createdAt: Number(row.created_at),
    ttlMs: row.ttl_ms === null ? null : Number(row.ttl_ms),
    pollIntervalMs: row.poll_interval_ms === null ? null : Number(row.poll_interval_ms),
    trace: traceOf(row.trace),
    state: row.state as DeliveryState,
    attempts: Number(row.attempts),
    nextAttemptAt: Number(row.next_attempt_at),
    lastStatus: row.last_status === null ? null : Number(row.last_status),
    lastError: row.last_error,
    lastAttemptAt: row.last_attempt_at === null ? null : Number(row.last_attempt_at),
  };
}

export function claimedFromRow(row: OutboxRow): ClaimedDelivery {
  return { ...deliveryFromRow(row), lease: { owner: row.lease_owner ?? "", generation: Number(row.lease_generation) } };
}

/** The statuses whose entry writes outbox rows, as an SQL list (constants, not input). */
export const EVENT_STATUS_SQL = "('input_required', 'completed', 'failed', 'cancelled')";
