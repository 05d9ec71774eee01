import type { CallToolResult, CreateMessageRequestParams, CreateMessageResult, ElicitRequestFormParams, ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";

/** T-TOOL: how a tool may be called. Absent means "forbidden" (T-TOOL-2). */
export type TaskSupport = "forbidden" | "optional" | "required";

/** What a tool handler gets besides its parsed arguments. */
export interface ToolContext {
  /** The task id when called as a task, else null. */
  readonly taskId: string | null;
  /** Aborts on `tasks/cancel`, on expiry, on shutdown (or when a plain call is cancelled). */
  readonly signal: AbortSignal;
  /** Progress with the request's progressToken; a no-op when the requestor sent none. */
  progress(progress: number, total?: number, message?: string): void;
  /** Asks the requestor via `elicitation/create`; the task shows `input_required` meanwhile. */
  elicit(params: ElicitRequestFormParams, options?: AskOptions): Promise<ElicitResult>;
  /** Asks the requestor via `sampling/createMessage`. */
  sample(params: CreateMessageRequestParams, options?: AskOptions): Promise<CreateMessageResult>;
  /** Sets the task's statusMessage (no-op for a plain call). */
  setStatusMessage(message: string): Promise<void>;
  /** Whether the requestor can answer `elicit()` / `sample()`. */
  readonly can: { elicit: boolean; sample: boolean };
  /**
   * Ends this plain call's SSE stream now, while the tool goes on (Streamable HTTP polling,
   * SEP-1699): the client reconnects with Last-Event-ID after the priming event's `retry` and gets
   * the rest there. A no-op where the stream cannot be resumed (no event store, an older client,
   * stdio) and for a call run as a task; absent on contexts that never have a stream.
   */
  closeStream?(): void;
  /** What the tool's {@link ToolDefinition.gather} returned, when it has one (else undefined). */
  readonly gathered?: unknown;
}

/** What {@link ToolDefinition.gather} can do: ask the requestor, and notice when it gives up. */
export type GatherContext = Pick<ToolContext, "signal" | "can" | "elicit" | "sample">;

/** How `ctx.elicit()` / `ctx.sample()` send their request. */
export interface AskOptions {
  /**
   * Send the request task-augmented — a task hosted by the client, which this side then polls to
   * its end — when the client declared `tasks.requests` support for it (T-CAP-3); otherwise
   * (and by default) as a plain request. The answer is the same either way.
   */
  asTask?: boolean;
  /** ttl requested for the client's task (T-NEW-1). */
  ttl?: number;
}

/** Declares a tool. */
export interface ToolDefinition<S extends z.ZodType = z.ZodType> {
  description?: string;
  title?: string;
  /** Arguments schema (zod); advertised as JSON Schema in tools/list. */
  input: S;
  /** Default "forbidden" (T-TOOL-2). */
  taskSupport?: TaskSupport;
  /**
   * The handler may safely run again from the start after a crash: a task interrupted by a
   * restart (or a lost worker) is then re-run instead of failed (at-least-once).
   */
  retryable?: boolean;
  /**
   * Input the tool needs before its work starts. Under 2026-07-28 it runs on the tools/call itself,
   * before any task exists, its questions answered through MRTR rounds (`InputRequiredResult`,
   * X-MRTR-2): it is run again from the start on each round, so it must ask the same questions in
   * the same order and have no side effects. Under 2025-11-25 it runs first in the task (its
   * questions make the task `input_required`) or the plain call. The handler gets its value as
   * `ctx.gathered`.
   */
  gather?: (args: z.output<S>, ctx: GatherContext) => Promise<unknown>;
  /** Text for `_meta["io.modelcontextprotocol/model-immediate-response"]` of the CreateTaskResult (T-NEW-3). */
  immediateResponse?: string | ((args: z.output<S>) => string);
}

export type ToolHandler<S extends z.ZodType = z.ZodType> = (args: z.output<S>, ctx: ToolContext) => Promise<CallToolResult>;

export interface RegisteredTool {
  name: string;
  definition: ToolDefinition;
  handler: ToolHandler;
}
