import { isSdkError, RpcCode, TaskError, withoutSdkPrefix } from "../../core/errors.js";

/**
 * The receiver answered with a JSON-RPC error: the error a task ended with, replayed by
 * `tasks/result` (T-RES-4), or the rejection of a request (unknown tool, bad arguments, -32601 for
 * a taskSupport mismatch, "Task not found", …). Carries the receiver's code, message and data
 * verbatim, so a requestor never sees a generic "task failed".
 */
export class RemoteError extends TaskError {
  /** The task this error belongs to, when there is one. */
  readonly taskId: string | null;

  constructor(code: number, message: string, data: unknown, taskId: string | null) {
    super("protocol", message, { code, data });
    this.name = "RemoteError";
    this.taskId = taskId;
  }
}

/** The task was cancelled (T-CANCEL): it has no result. */
export class TaskCancelledError extends TaskError {
  readonly taskId: string;

  /**
   * @param sent the JSON-RPC error the receiver answered `tasks/result` with, when it answered
   * with one: its code and data are kept (a receiver may use another code than -32800); the
   * message says the task's statusMessage when there is one (it says who cancelled), else the
   * receiver's.
   */
  constructor(taskId: string, statusMessage?: string, sent?: { code: number; message: string; data?: unknown }) {
    super("cancelled", statusMessage ? `Task was cancelled: ${statusMessage}` : (sent?.message ?? "Task was cancelled"), {
      code: sent?.code ?? RpcCode.TaskCancelled,
      ...(sent?.data !== undefined && { data: sent.data }),
    });
    this.name = "TaskCancelledError";
    this.taskId = taskId;
  }
}

/**
 * The exchange with the receiver broke down before it answered: connection closed, no answer in
 * time, an unparseable answer. Carries the SDK's local code (-32000 connection closed, -32001
 * timeout) or -32603 for a malformed answer.
 */
export class ConnectionError extends TaskError {
  constructor(message: string, code: number = RpcCode.ConnectionClosed, cause?: unknown) {
    super("protocol", message, { code });
    this.name = "ConnectionError";
    if (cause !== undefined) (this as { cause?: unknown }).cause = cause;
  }
}

/**
 * This requestor's own handler refused one of the receiver's input requests (nobody at a terminal
 * to answer a sampling request, say), where the era has no way to send a refusal: a 2026-07-28
 * `inputResponses` value is an answer (X-UPD-4) or nothing. The task still waits for that answer
 * on the receiver; the refusal ends this requestor's wait instead. Carries the JSON-RPC code and
 * message the handler refused with, as a 2025-11-25 refusal would have sent them.
 */
export class InputRefusedError extends TaskError {
  /** The task whose input request was refused. */
  readonly taskId: string | null;

  constructor(code: number, message: string, taskId: string | null, cause?: unknown) {
    super("protocol", message, { code });
    this.name = "InputRefusedError";
    this.taskId = taskId;
    if (cause !== undefined) (this as { cause?: unknown }).cause = cause;
  }

  /** The refusal `error` (what an input handler threw) stands for. */
  static of(error: unknown, taskId: string | null): InputRefusedError {
    if (error instanceof InputRefusedError) return error;
    if (isSdkError(error)) return new InputRefusedError(error.code, withoutSdkPrefix(error.message), taskId, error);
    if (error instanceof TaskError) return new InputRefusedError(error.code, error.message, taskId, error);
    return new InputRefusedError(RpcCode.InternalError, error instanceof Error ? error.message : String(error), taskId, error);
  }
}

/**
 * Maps what an SDK request rejected with to one of the errors above. A JSON-RPC error answer is a
 * {@link RemoteError}; the SDK's own "connection closed" / "request timed out" (raised locally,
 * recognisable by their exact message or the timeout they carry) and anything else are
 * {@link ConnectionError}s.
 */
export function fromSdkError(error: unknown, taskId: string | null = null): TaskError {
  if (error instanceof TaskError) return error;
  if (isSdkError(error)) {
    const message = withoutSdkPrefix(error.message);
    const localClose = error.code === RpcCode.ConnectionClosed && message === "Connection closed";
    const localTimeout =
      error.code === RpcCode.RequestTimeout && typeof (error.data as { timeout?: unknown } | undefined)?.timeout === "number";
    if (localClose || localTimeout) return new ConnectionError(message, error.code, error);
    return new RemoteError(error.code, message, error.data, taskId);
  }
  if (error instanceof Error && error.name === "ZodError") {
    return new ConnectionError("The receiver sent a malformed answer", RpcCode.InternalError, error);
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ConnectionError(message || "The request failed", RpcCode.ConnectionClosed, error);
}

/**
 * How long the receiver asked to wait before asking again, when its error says the request can
 * succeed later: a store briefly unreachable or busy, a draining server, a rate limit. Such an
 * error is about the receiver, not the task, which goes on. Read from `data.retryAfterMs`, which
 * every such refusal carries in both eras; undefined for any other error.
 */
export function retryAfterOf(error: unknown): number | undefined {
  if (!(error instanceof RemoteError)) return undefined;
  const data = error.data;
  if (typeof data !== "object" || data === null) return undefined;
  const after = (data as { retryAfterMs?: unknown }).retryAfterMs;
  return typeof after === "number" && Number.isFinite(after) && after >= 0 ? after : undefined;
}
