import type { ClientCapabilities, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { TaskRecord } from "../../core/task.js";
import type { TaskEvent } from "../../events/task-event.js";
import type { LogLevel } from "../logging/log-level.js";
import type { OwnErrorCodes } from "../own-error-wire.js";
import type { LooseParams } from "../request-schemas.js";
import type { TaskSupport } from "../tool-definition.js";
import type { TraceCarrier } from "../tracing/trace-carrier.js";

/** What a request's params tell its span, as its era reads them. */
export interface OperationTrace {
  /** The trace context the params carry (SEP-414), if any. */
  carrier?: TraceCarrier;
  /** The tool or prompt the request names. */
  target?: string;
  /** The task the request names. */
  taskId?: string;
  /** True for a request a session server answers on a stream even when it came as plain JSON (its span is made there). */
  servedOnStream?: boolean;
}

/**
 * One protocol revision's wire, as pure functions: they read the era's requests and build its
 * results, errors and notifications, and do no I/O. The server's binding of an era
 * (`src/mcp/rev…/`) and its requestor (`src/mcp/requestor/rev…/`) both speak through it, so the
 * shapes of a revision are spelled once, in `src/mcp/wire/rev…/`. What every era's codec gives:
 */
export interface WireCodec {
  /** The protocol revision whose messages this codec reads and builds. */
  readonly revision: string;
  /** This era's codes for our own conditions where they differ from the engine's (`own-error-wire.ts`). */
  readonly ownErrorCodes: OwnErrorCodes;
  /** What a request of this era tells its span (its trace context, the tool or task it names). */
  operationTrace(method: string, params: LooseParams, plain?: { sessionStreamCarriesOwnTasks: boolean }): OperationTrace;
  /**
   * The idempotency key a `tools/call` names its operation with (SEP-3182: `params.idempotencyKey`),
   * unchecked; undefined when it sent none.
   */
  idempotencyKeyOf(params: LooseParams): unknown;
  /** The per-task webhook a creating `tools/call` asks for (`_meta["dev.mcp-tasks/webhook"]`), unchecked; undefined when none. */
  webhookRequestOf(params: LooseParams): unknown;
  /** What a `tools/call` that became a task answers with (T-NEW-2, T-NEW-3; X-NEW-1). */
  encodeCreated(task: TaskRecord, immediateResponse: string | undefined): Record<string, unknown>;
}

/** The codec of an era spoken in sessions opened by `initialize` (2025-11-25): the rest of its wire. */
export interface SessionWire extends WireCodec {
  /** The server capabilities this era declares beside `tools` when task support is on (T-CAP-1/2). */
  serverCapabilities(): Record<string, unknown>;
  /**
   * The method whose response stream carries a task's questions to its requestor while it waits
   * (2025-11-25: `tasks/result`); a front keeps such a stream out of resumption. Null when none.
   */
  readonly questionStreamMethod: string | null;
  /**
   * What a `tools/call` asks of a task when it asks for one (its ttl…), undefined for a plain call
   * (2025-11-25: `params.task`).
   */
  taskParamsOf(params: LooseParams): unknown;
  /** A request's params without what {@link taskParamsOf} reads: the request as it runs plainly (T-NEW-4), or as its task keeps it. */
  withoutTaskParams(params: LooseParams): Record<string, unknown>;
  /** The ttl that task params ({@link taskParamsOf}) ask for (T-NEW-1), unchecked; undefined when they name none. */
  requestedTtlOf(taskParams: unknown): unknown;
  /**
   * The notification a bus event is on the standalone stream of session `sessionId` (a task's
   * status, its progress), or null when it is not that session's to see.
   */
  streamNotificationOf(event: TaskEvent, sessionId: string): Record<string, unknown> | null;
  /** The notification that carries one log message to this era's session. */
  logMessage(level: LogLevel, data: unknown, logger: string | undefined): { method: string; params: Record<string, unknown> };
  /** The `_meta` that marks a message as one task's (a task's own progress, its log messages, T-META-1). */
  relatedTaskMeta(taskId: string): Record<string, unknown>;
  /** The task a message's `_meta` marks it as belonging to ({@link relatedTaskMeta}), or null. */
  relatedTaskOf(value: unknown): string | null;
  /** A tool as this era's session lists it in `tools/list` with its task support (T-TOOL-1). */
  listedWithTaskSupport(tool: Tool, support: TaskSupport): Tool;
  /** Whether a session's client declared that it follows tasks itself; one that did not gets the fallback for hosts without tasks. */
  clientFollowsTasks(capabilities: ClientCapabilities | undefined): boolean;
  /** The notification a party hosting tasks for its peer (a client hosting sampling or elicitation) sends when one changes status. */
  hostedStatusNotification(task: TaskRecord): { method: string; params: Record<string, unknown> };
}
