import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { LifecycleEvent, TaskOutcome } from "../mcp/rev2025-11-25/requestor/remote-task.js";
import type { WireTask } from "../mcp/rev2025-11-25/wire.js";

/** The protocol revisions a TaskClient speaks (README "Protocol eras"). */
export const PROTOCOL_REVISIONS = ["2025-11-25", "2026-07-28"] as const;
export type ProtocolRevision = (typeof PROTOCOL_REVISIONS)[number];

/**
 * A tool call running as a task on the server, whichever era it was created in. Its status reads
 * as a 2025-11-25 Task (`ttl`, `pollInterval`), the 2026-07-28 `ttlMs`/`pollIntervalMs` mapped in,
 * so code following a task never asks which wire it came over.
 */
export interface ToolTask {
  readonly id: string;
  /** The task as last seen (a poll, a notification, the CreateTaskResult), or null. */
  readonly last: WireTask | null;
  /** `tasks/get`. Rejects with a RemoteError (e.g. -32602 not found) or a ConnectionError. */
  status(options?: { signal?: AbortSignal }): Promise<WireTask>;
  /** The status changes, polled at the task's poll interval; ends after a terminal status. */
  updates(options?: { signal?: AbortSignal }): AsyncGenerator<WireTask, void, undefined>;
  /** How the task ended (answering its questions meanwhile); rejects only when no answer could be had. */
  outcome(options?: { signal?: AbortSignal }): Promise<TaskOutcome<CallToolResult>>;
  /** The result, or the outcome's error thrown. */
  result(options?: { signal?: AbortSignal }): Promise<CallToolResult>;
  /** `tasks/cancel`: the task as it reads afterwards. */
  cancel(options?: { signal?: AbortSignal }): Promise<WireTask>;
  /** Stops polling and listening; a pending wait rejects. */
  dispose(): void;
}

/** What a call sent: a plain result, or the task the server made of it. */
export type EraCall = { kind: "result"; result: CallToolResult } | { kind: "task"; created: WireTask; immediateResponse?: string };

export interface EraCallOptions {
  task?: boolean;
  ttl?: number;
  idempotencyKey?: string;
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  signal?: AbortSignal;
}

/** How a handle reports to its TaskClient. */
export interface HandleOptions {
  initial?: WireTask;
  /** Answer the task's questions as they come (off for a one-off look, `tasks get`). */
  answerInput: boolean;
  onLifecycle: (event: LifecycleEvent) => void;
  defaultPollIntervalMs?: number;
}

/**
 * The seam between TaskClient and a protocol revision's requestor wire, as `src/mcp/era.ts` is on
 * the server side: everything a revision's wire knows (its methods, shapes, how input travels)
 * lives in one folder implementing this (`rev2025-11-25/`, `rev2026-07-28/`); TaskClient keeps the
 * journal, the log and the handles, and never asks which era it talks.
 */
export interface RequestorEra {
  readonly revision: ProtocolRevision;
  /** Every page of `tools/list`. */
  listTools(): Promise<Tool[]>;
  /** Calls a tool; the era decides (2025: the client, T-TOOL) or learns (2026: the server, X-CAP-4) whether it is a task. */
  callTool(name: string, args: Record<string, unknown>, options: EraCallOptions): Promise<EraCall>;
  /** A handle on a task by id. */
  task(taskId: string, options: HandleOptions): ToolTask;
  /** Every task the server lets this client see; refused where the era has no listing (2026: X-LEG-1). */
  list(options: { signal?: AbortSignal }): AsyncGenerator<WireTask, void, undefined>;
  /** Stops what the era runs in the background (not the SDK client's connection). */
  close(): Promise<void>;
}
