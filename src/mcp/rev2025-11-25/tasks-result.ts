import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import { isSdkError, RpcCode, TaskError, toRpcError } from "../../core/errors.js";
import type { AbortWatch } from "../../core/abort-watch.js";
import type { Caller } from "../../core/caller.js";
import { LazyAbort } from "../../core/lazy-abort.js";
import type { InputRequest, TaskOutcome, TaskRecord } from "../../core/task.js";
import type { TaskChange } from "../../runtime/task-engine.js";
import { deliverPendingInputs } from "./input-delivery.js";
import type { TaskEngine } from "../../runtime/task-engine.js";
import { requireTaskId, withOperation } from "../param-checks.js";
import { type LooseParams } from "../request-schemas.js";
import { ConnectionError, RemoteError, TaskCancelledError } from "../requestor/requestor-errors.js";
import { sendInputRequest } from "./send-input-request.js";
import type { SessionContext } from "../era.js";
import { sessionLinkOf, type SessionLink } from "./status-notifications.js";
import { withRelatedTask } from "../wire/rev2025-11-25/wire.js";

/** Longest the SDK waits for the requestor to answer a delivered input request (a human may be slow). */
const INPUT_ANSWER_TIMEOUT_MS = 24 * 60 * 60 * 1000;

/**
 * `tasks/result` (T-RES): blocks until the task is terminal, delivering the task's queued
 * requests on this request's stream meanwhile (T-INPUT-3, T-INPUT-5), then answers with the
 * stored result plus related-task `_meta` (T-RES-5), or replays the stored JSON-RPC error (T-RES-4).
 */
export function tasksResult(
  session: SessionContext,
  params: LooseParams,
  caller: Caller,
  request: { requestId: RequestId; abandoned: AbortWatch },
): Promise<Record<string, unknown>> {
  const link = sessionLinkOf(session);
  let taskId: string;
  try {
    taskId = requireTaskId(params);
  } catch (error) {
    return Promise.reject(error);
  }
  return new ResultWait(session, link, caller, request.requestId, request.abandoned, taskId).run();
}

/**
 * One blocked `tasks/result` of a session: what it keeps while it waits, in one record whose
 * methods are its callbacks (it is its request's abort listener itself), rather than a closure
 * per callback over the handler's frame — thousands of requests may wait at once.
 */
class ResultWait {
  /**
   * Ends the requests this call delivered once it returns: a question still out when the task
   * ends (cancelled, expired, answered elsewhere) is withdrawn with notifications/cancelled
   * instead of lingering on the client. Made at the first delivery: most tasks ask nothing.
   */
  private deliveries: AbortController | null = null;
  /** The wait ends early when an answer it delivered is refused: that refusal is this request's answer. */
  private readonly waiting = new LazyAbort();
  private refusal: TaskError | null = null;

  constructor(
    private readonly session: SessionContext,
    private readonly link: SessionLink,
    private readonly caller: Caller,
    private readonly requestId: RequestId,
    private readonly signal: AbortWatch,
    private readonly taskId: string,
  ) {}

  run(): Promise<Record<string, unknown>> {
    const { engine } = this.session;
    // An unknown, foreign or expired task is refused by awaitOutcome's first read, with the same
    // "Failed to retrieve task result: …" error (wrapped below) and before anything is delivered.
    this.link.trackResult(this.taskId, this.requestId, this.caller.owner);
    this.signal.addEventListener("abort", this);
    if (this.signal.aborted) this.handleEvent();
    // Continued, not awaited: no frame of this method is kept while the request waits.
    return engine.awaitOutcome(this.taskId, this.caller, this.waiting, this.onChange).then(
      (task) => this.answer(task),
      (error: unknown) => {
        this.end();
        // T-INPUT-3 with a form: an answer that does not fit is refused (-32602 naming the field)
        // and the question stays queued; the next tasks/result delivers it again.
        throw withOperation("Failed to retrieve task result", this.refusal ?? error);
      },
    );
  }

  /** The request was abandoned (an `AbortSignal` listener object): the wait and its deliveries end. */
  handleEvent(): void {
    this.deliveries?.abort(this.signal.reason);
    this.waiting.abort(this.signal.reason);
  }

  /** Each step of the wait. */
  private readonly onChange = async (change: TaskChange): Promise<void> => {
    // A task queues its question, then moves to input_required, then publishes an `input`
    // event: a `working` task with no such event since has nothing queued (one query less).
    if (change.inputsMayHaveChanged && !this.waiting.aborted)
      await deliverPendingInputs(
        this.session.engine,
        change.task,
        this.caller,
        (input) => this.deliver(input),
        (error) => this.refused(error),
      );
  };

  private async answer(task: TaskRecord): Promise<Record<string, unknown>> {
    try {
      await this.link.announceEnd(this.taskId, this.requestId);
      return resultOf(task);
    } catch (error) {
      throw withOperation("Failed to retrieve task result", error);
    } finally {
      this.end();
    }
  }

  private end(): void {
    this.signal.removeEventListener("abort", this);
    this.deliveries?.abort("tasks/result answered");
    this.link.untrackResult(this.taskId, this.requestId);
  }

  private refused(error: TaskError): void {
    this.refusal ??= error;
    this.waiting.abort(error);
  }

  private deliveriesSignal(): AbortSignal {
    if (this.deliveries === null) {
      this.deliveries = new AbortController();
      if (this.signal.aborted) this.deliveries.abort(this.signal.reason);
    }
    return this.deliveries.signal;
  }

  private async deliver(input: InputRequest): Promise<TaskOutcome> {
    const { server } = this.session;
    const all = this.deliveriesSignal();
    // Its own signal, unlinked once answered: the SDK would otherwise withdraw (with
    // notifications/cancelled) a request the requestor has already answered.
    const one = new AbortController();
    const withdraw = (): void => one.abort(all.reason);
    all.addEventListener("abort", withdraw, { once: true });
    // Abandoned before this delivery began: the listener above will never fire.
    if (all.aborted) withdraw();
    try {
      // T-INPUT-2 related-task _meta; as a client-hosted task when the tool asked for one.
      const value = await sendInputRequest(server, input, {
        relatedRequestId: this.requestId,
        signal: one.signal,
        timeout: INPUT_ANSWER_TIMEOUT_MS,
      });
      return { kind: "result", value };
    } catch (error) {
      // A JSON-RPC error answer is the requestor's answer; a closed stream, an abandoned
      // tasks/result or our own timeout is not (the request then stays queued). Decided by the
      // connection's state, not the code: a requestor may answer with -32000/-32001 itself.
      const lost = all.aborted || server.transport === undefined || isLocalTimeout(error) || error instanceof ConnectionError;
      if (lost) throw error;
      if (isSdkError(error)) return { kind: "error", error: toRpcError(error).body };
      if (error instanceof RemoteError || error instanceof TaskCancelledError) {
        return {
          kind: "error",
          error: { code: error.code, message: error.message, ...(error.data !== undefined && { data: error.data }) },
        };
      }
      throw error;
    } finally {
      all.removeEventListener("abort", withdraw);
    }
  }
}

/** `tasks/result` of a task that never asks its requestor anything: waits for the outcome and answers with it. */
export async function awaitResultOf(
  engine: TaskEngine,
  params: LooseParams,
  caller: Caller,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const taskId = requireTaskId(params);
  try {
    return resultOf(await engine.awaitOutcome(taskId, caller, signal));
  } catch (error) {
    throw withOperation("Failed to retrieve task result", error);
  }
}

/** The SDK's own "no answer in time" error (it carries the timeout it waited), not a requestor's answer. */
function isLocalTimeout(error: unknown): boolean {
  return (
    isSdkError(error) &&
    error.code === RpcCode.RequestTimeout &&
    typeof (error.data as { timeout?: unknown } | undefined)?.timeout === "number"
  );
}

/** The terminal task's answer: its result, its replayed error, or "cancelled" (-32800). */
export function resultOf(task: TaskRecord): Record<string, unknown> {
  const outcome = task.outcome;
  if (task.status === "cancelled" || outcome === null) {
    if (task.status === "cancelled") {
      throw new TaskError("cancelled", "Task was cancelled: it has no result", { data: { taskId: task.id } });
    }
    throw TaskError.internal();
  }
  if (outcome.kind === "error") {
    const { code, message, data } = outcome.error;
    throw TaskError.protocol(code, message, data);
  }
  return withRelatedTask(outcome.value as object, task.id);
}
