import type { RemoteError, TaskCancelledError } from "./requestor-errors.js";

/** The statuses a task has in every era (T-LIFE-1, X-TASK-2). */
export type RemoteTaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/** What a task last reported of its progress (T-PROG-1; under 2026-07-28 from our server's `tasks/get`). */
export interface RemoteTaskProgress {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * A task as a requestor sees it, whichever era it lives in: each era's requestor maps its wire
 * to this (2025-11-25 `ttl`/`pollInterval` as they are; 2026-07-28 `ttlMs`/`pollIntervalMs`), so
 * code following a task never asks which wire it came over.
 */
export interface RemoteTaskInfo {
  taskId: string;
  status: RemoteTaskStatus;
  statusMessage?: string;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601. */
  lastUpdatedAt: string;
  /** ms from creation; null when unlimited. */
  ttl: number | null;
  /** The poll interval the server suggests, ms. */
  pollInterval?: number;
  /** Where the task's progress got to, when the era's answer says it. */
  progress?: RemoteTaskProgress;
}

/** How a task ended, as its requestor learns it. */
export type TaskOutcome<R> =
  | { status: "completed"; result: R }
  /** A result that reports failure (a CallToolResult with isError, T-LIFE-4). */
  | { status: "failed"; result: R }
  /** The JSON-RPC error the request ended with (T-RES-4, X-GET-6). */
  | { status: "failed"; error: RemoteError }
  | { status: "cancelled"; error: TaskCancelledError };

/** Requestor-side lifecycle events (T-SEC-5: requestors SHOULD log task lifecycle events). */
export type LifecycleEvent =
  | { type: "status"; taskId: string; status: RemoteTaskStatus; statusMessage?: string }
  | { type: "result"; taskId: string; status: TaskOutcome<unknown>["status"] }
  | { type: "cancel"; taskId: string };

const TERMINAL: ReadonlySet<RemoteTaskStatus> = new Set(["completed", "failed", "cancelled"]);

/** completed, failed and cancelled never change again (T-LIFE-3, X-TASK-3). */
export function isTerminalTaskStatus(status: RemoteTaskStatus): boolean {
  return TERMINAL.has(status);
}

/**
 * A handle on a task on the other side, whichever era and whoever holds it: TaskClient's tasks
 * (`ToolTask`), a tool's `{ asTask: true }` request, the gateway's upstream task. Each era has one
 * implementation, so following a task — polling, waiting, answering its questions — is written
 * once per wire and shared by every requestor.
 */
export interface RemoteTaskHandle<R> {
  readonly id: string;
  /** The task as last seen (a poll, a notification, the CreateTaskResult), or null. */
  readonly last: RemoteTaskInfo | null;
  /** `tasks/get`. Rejects with a RemoteError (e.g. -32602 not found) or a ConnectionError. */
  status(options?: { signal?: AbortSignal }): Promise<RemoteTaskInfo>;
  /** The status changes, polled at the task's poll interval; ends after a terminal status. */
  updates(options?: { signal?: AbortSignal }): AsyncGenerator<RemoteTaskInfo, void, undefined>;
  /** How the task ended (answering its questions meanwhile); rejects only when no answer could be had. */
  outcome(options?: { signal?: AbortSignal }): Promise<TaskOutcome<R>>;
  /** The result, or the outcome's error thrown. */
  result(options?: { signal?: AbortSignal }): Promise<R>;
  /** `tasks/cancel`: the task as it reads afterwards. */
  cancel(options?: { signal?: AbortSignal }): Promise<RemoteTaskInfo>;
  /** Stops polling and listening; a pending wait rejects. */
  dispose(): void;
}
