import type {
  CallToolResult,
  CreateMessageRequestParams,
  CreateMessageResult,
  ElicitRequestFormParams,
  ElicitResult,
  Icon,
  ListRootsResult,
  Tool,
  ToolAnnotations,
} from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { RecoveryPolicy } from "../runtime/recovery-policy.js";
import type { LogLevel } from "./logging/log-level.js";

/** T-TOOL: how a tool may be called. Absent means "forbidden" (T-TOOL-2). */
export type TaskSupport = "forbidden" | "optional" | "required";

/** What a tool handler gets besides its parsed arguments. */
export interface ToolContext {
  /** The task id when called as a task, else null. */
  readonly taskId: string | null;
  /**
   * The owner key the call is made for (the task's owner, the plain call's caller; null when bound
   * to nobody, T-SEC-2): the gateway keeps one upstream process per principal by it.
   */
  readonly owner: string | null;
  /** Aborts on `tasks/cancel`, on expiry, on shutdown (or when a plain call is cancelled). */
  readonly signal: AbortSignal;
  /** Progress with the request's progressToken; a no-op when the requestor sent none. */
  progress(progress: number, total?: number, message?: string): void;
  /** Asks the requestor via `elicitation/create`; the task shows `input_required` meanwhile. */
  elicit(params: ElicitRequestFormParams, options?: AskOptions): Promise<ElicitResult>;
  /** Asks the requestor via `sampling/createMessage`. */
  sample(params: CreateMessageRequestParams, options?: AskOptions): Promise<CreateMessageResult>;
  /**
   * Sends the requestor a log message (`notifications/message`), unless the session asked for a
   * higher level (`logging/setLevel`). A plain call's message rides the call's own stream; a
   * task's carries the related-task `_meta` and travels as the task's progress does. Dropped
   * where nothing can carry it (see docs/writing-tools.md).
   */
  log(level: LogLevel, data: unknown, logger?: string): void;
  /** Sets the task's statusMessage (no-op for a plain call). */
  setStatusMessage(message: string): Promise<void>;
  /** Whether the requestor can answer `elicit()` / `sample()` / `listRoots()` (roots: absent means no). */
  readonly can: { elicit: boolean; sample: boolean; roots?: boolean };
  /**
   * Asks the requestor for its roots (`roots/list`): as a task's question (T-INPUT; X-UPD-1 lists
   * `roots/list` among 2026-07-28 input requests) or on a plain call's stream. Absent where the
   * binding has no way to ask (a 2026-07-28 plain call); throws when the requestor declared no
   * roots capability.
   */
  listRoots?(): Promise<ListRootsResult>;
  /**
   * Ends this plain call's SSE stream now, while the tool goes on (Streamable HTTP polling,
   * SEP-1699): the client reconnects with Last-Event-ID after the priming event's `retry` and gets
   * the rest there. A no-op where the stream cannot be resumed (no event store, an older client,
   * stdio) and for a call run as a task; absent on contexts that never have a stream.
   */
  closeStream?(): void;
  /** What the tool's {@link ToolDefinition.gather} returned, when it has one (else undefined). */
  readonly gathered?: unknown;
  /**
   * Durable execution (docs/durable-execution.md): runs `fn` once per task. For a tool with
   * `recovery: "resume"` running as a task, the result is checkpointed in the store and a re-run
   * after a crash gets it back without running `fn` again; the n-th call with one name in a run
   * is its own step. The result must be JSON (it comes back through JSON, on the first run too) and
   * at most maxResultBytes. Otherwise (other tools, plain calls) it simply runs `fn`.
   */
  step<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /**
   * Waits `ms` milliseconds, or until `{ until }` (a Date or ms since the epoch), holding no handler
   * slot (docs/durable-execution.md, Waiting). Run as a task, the timer is stored: it survives a
   * restart, and a tool with `recovery: "resume"` is parked meanwhile — unloaded, then replayed by
   * any node when the time comes; the task shows `working` with a status message saying until when.
   * A plain call just waits in memory.
   */
  sleep(duration: number | { until: Date | number }): Promise<void>;
  /**
   * Waits for the next event `name` emitted for the task's owner (`app.emit`, `POST /events/{name}`,
   * `mcp-tasks events emit`), or until `timeoutMs` has passed: resolves with its payload, or with
   * `{ timedOut: true }`. Holds no slot, and parks a resumable tool like {@link sleep}. An event
   * emitted shortly before the wait started (the event window) counts. Only for a call run as a task.
   */
  waitForEvent(name: string, options?: { timeoutMs?: number }): Promise<{ timedOut: false; payload: unknown } | { timedOut: true }>;
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
  /**
   * Schema of the tool's `structuredContent` (a zod object), advertised as `outputSchema` in
   * tools/list. A result that is not an error must then carry `structuredContent` that fits it;
   * one that does not is the handler's failure, answered -32603 (see `checkStructuredContent`).
   */
  outputSchema?: z.ZodObject;
  /**
   * JSON Schemas listed in tools/list as they are, in place of those written from `input` and
   * `outputSchema`: for a tool whose schema is someone else's (the gateway passes an upstream's
   * through, with `input: z.looseObject({})` and the upstream checking the arguments itself).
   */
  listedSchemas?: { input?: Tool["inputSchema"]; output?: Tool["outputSchema"] };
  /**
   * Behaviour hints for clients (readOnlyHint, destructiveHint, …), listed as they are.
   * `idempotentHint: true` also makes a repeated identical keyless plain call of the same caller,
   * while the first still runs, attach to its task (see {@link dedupe}).
   */
  annotations?: ToolAnnotations;
  /**
   * Whether a repeated identical plain call without an idempotency key (a host without tasks
   * retrying), from the same caller while the first is still running, attaches to the first one's
   * task instead of starting another (docs/idempotency.md). Default:
   * `annotations.idempotentHint`.
   */
  dedupe?: boolean;
  /** Icons a client may show for the tool, listed as they are. */
  icons?: Icon[];
  /** The tool's `_meta` in tools/list, listed as it is. */
  _meta?: Record<string, unknown>;
  /** Default "forbidden" (T-TOOL-2). */
  taskSupport?: TaskSupport;
  /**
   * What happens to a task of this tool interrupted by a crash, a restart or a lost worker
   * (docs/durable-execution.md): "resume" re-runs the handler from the start with its `ctx.step`
   * checkpoints and the requestor's stored answers replayed (a question still unanswered is
   * delivered again, not asked twice); "retry" re-runs it from scratch; "fail" (the default) fails
   * the task, because re-running side effects nobody declared safe to repeat could do harm.
   */
  recovery?: RecoveryPolicy;
  /**
   * Whether a task of this tool with `recovery: "resume"` is parked while it waits (a question,
   * `ctx.sleep`, `ctx.waitForEvent`): its call let go and replayed once what it waits for arrives
   * (docs/durable-execution.md, Parking). Default true. Set false for a handler that keeps work of
   * its own in flight beside a wait outside `ctx.step` (a loop following another server, say): that
   * work would be let go with the call. It still gives its slot back while it waits.
   */
  park?: boolean;
  /**
   * Tasks of this tool whose handlers run at once, across every caller (and a cluster's every
   * worker); more wait in the queue in `working` ("queued (n ahead)") and start as slots free.
   * Default: no cap of its own.
   */
  concurrency?: number;
  /** ttl (ms) of this tool's tasks when the requestor asks for none (the server's default otherwise); capped like any ttl. */
  defaultTtlMs?: number;
  /** Compatibility alias of `recovery: "retry"` (ignored when `recovery` is given). */
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

/** Runs a tool: its parsed arguments and the {@link ToolContext} in, a CallToolResult out (a throw is the call's error). */
export type ToolHandler<S extends z.ZodType = z.ZodType> = (args: z.output<S>, ctx: ToolContext) => Promise<CallToolResult>;

export interface RegisteredTool {
  name: string;
  definition: ToolDefinition;
  handler: ToolHandler;
}
