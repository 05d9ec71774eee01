/**
 * Row shapes shared by the SQL stores (SQLite, PostgreSQL) and their mapping to the
 * protocol-neutral records of `core`. JSON columns hold text the store wrote itself, so parsing
 * trusts their shape. Only `retryable` differs between the engines (INTEGER 0/1 vs BOOLEAN).
 */
import type { TaskStatus } from "../../core/task-status.js";
import type { Checkpoint } from "../checkpoint-store.js";
import type { InputRequest, StatusChange, TaskOrigin, TaskOutcome, TaskProgress, TaskRecord } from "../../core/task.js";

export interface TaskRow<Flag = number | boolean> {
  id: string;
  owner: string | null;
  method: string;
  name: string;
  request: string;
  origin: string;
  status: TaskStatus;
  status_message: string | null;
  created_at: number;
  updated_at: number;
  ttl_ms: number | null;
  expires_at: number | null;
  poll_interval_ms: number | null;
  retryable: Flag;
  outcome: string | null;
  progress: string | null;
  /** Absent from rows of a query that does not select it. */
  wait_mode?: "memory" | "parked" | null;
}

export interface InputRow {
  task_id: string;
  id: string;
  method: string;
  params: string;
  created_at: number;
  answer: string | null;
}

export interface HistoryRow {
  status: TaskStatus;
  status_message: string | null;
  at: number;
  /** PostgreSQL only: the cluster worker that held the task then. */
  node?: string | null;
}

/** JSON text for a column; `undefined` (which JSON.stringify drops) is kept as JSON null. */
export function toJson(value: unknown): string {
  return JSON.stringify(value) ?? "null";
}

function parseJson(text: string): unknown {
  return JSON.parse(text) as unknown;
}

function parseNullable<T>(text: string | null): T | null {
  return text === null ? null : (parseJson(text) as T);
}

export function taskFromRow(row: TaskRow): TaskRecord {
  return {
    id: row.id,
    owner: row.owner,
    method: row.method,
    name: row.name,
    request: parseJson(row.request),
    origin: parseJson(row.origin) as TaskOrigin,
    createdAt: row.created_at,
    ttlMs: row.ttl_ms,
    pollIntervalMs: row.poll_interval_ms,
    retryable: row.retryable === true || row.retryable === 1,
    status: row.status,
    statusMessage: row.status_message,
    updatedAt: row.updated_at,
    expiresAt: row.expires_at,
    outcome: parseNullable<TaskOutcome>(row.outcome),
    progress: parseNullable<TaskProgress>(row.progress),
    // Only while the task waits, so a task that never waited reads as it always did.
    ...(row.wait_mode != null && { waitMode: row.wait_mode }),
  };
}

export function inputFromRow(row: InputRow): InputRequest {
  return {
    taskId: row.task_id,
    id: row.id,
    method: row.method,
    params: parseJson(row.params),
    createdAt: row.created_at,
    answer: parseNullable<TaskOutcome>(row.answer),
  };
}

export function statusChangeFromRow(row: HistoryRow): StatusChange {
  const change: StatusChange = { status: row.status, statusMessage: row.status_message, at: row.at };
  if (typeof row.node === "string") change.node = row.node;
  return change;
}

export interface CheckpointRow {
  name: string;
  value: string;
  created_at: number;
}

export function checkpointFromRow(row: CheckpointRow): Checkpoint {
  return { name: row.name, value: parseJson(row.value), createdAt: row.created_at };
}
