import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Caller } from "../../core/caller.js";
import { TaskError } from "../../core/errors.js";
import { isTerminal } from "../../core/task-status.js";
import type { TaskProgress, TaskRecord } from "../../core/task.js";
import type { TaskEngine } from "../../runtime/task-engine.js";
import type { TaskServerConfig } from "../task-server-config.js";
import { statusAnswer, taskSummary } from "./task-summary.js";

/** How the plain call that started a fallback task is still reachable while it waits. */
export interface WaitingCall {
  caller: Caller;
  /** Aborts when the client cancels the call or hangs up: the task is then cancelled too. */
  signal: AbortSignal;
  /** Sends progress under the call's progressToken; absent when the call sent none (or has no stream). */
  sendProgress?: (progress: TaskProgress) => Promise<void>;
  /**
   * Waits for the task's end, relaying its questions on this call's stream (the era's
   * `tasks/result`); given only when the client can answer them (it declared elicitation or sampling).
   */
  relay?: (taskId: string, signal: AbortSignal) => Promise<unknown>;
  /**
   * Sends one of the task's log messages on this call's stream (the call's own level filter
   * applies). Used until a relay takes over: the era's relay carries them from then on.
   */
  sendLog?: (level: string, data: unknown, logger: string | undefined) => Promise<void>;
}

/**
 * A fallback call (docs/hosts/README.md): the tool already runs as `task`; waits up to
 * `backgroundAfterMs` for it. Ended by then: the answer a plain call of the tool would have had
 * (its CallToolResult, or its JSON-RPC error replayed). Still running, or asking a question: a
 * CallToolResult saying the work goes on in the background, with the task id to poll. A question
 * the task asks is relayed on this call's stream when the client can answer it (`call.relay`),
 * else it ends the wait (the background answer says input is needed). An answer to a relayed
 * question that does not fit it ends the wait too: the background answer says why.
 * Meanwhile, with a progressToken, the task's progress is relayed and, until it reports any,
 * keep-alive progress is sent every `keepAliveMs`, so hosts that reset their timeout on progress
 * keep waiting. Progress stops with the answer: the token belongs to this call.
 */
export async function answerWithin(
  { engine, config }: { engine: TaskEngine; config: Pick<TaskServerConfig, "backgroundAfterMs" | "keepAliveMs"> },
  task: TaskRecord,
  call: WaitingCall,
): Promise<CallToolResult> {
  const stopProgress = call.sendProgress ? relayProgress(engine, task.id, config.keepAliveMs, call.sendProgress) : () => {};
  const logs = relayLogs(engine, task.id, call.sendLog);
  try {
    const settled = await settledWithin(engine, task, call, config.backgroundAfterMs ?? 0, logs.stop);
    if (typeof settled === "object" && settled !== null && "refused" in settled) {
      // The host's answer did not fit the question: it gets the task's id, and why, so it can be asked again.
      const now = await engine.get(task.id, call.caller);
      return isTerminal(now.status) ? endedAnswer(now) : backgroundAnswer(now, await pendingOf(engine, now, call), settled.refused);
    }
    if (settled === "abandoned") {
      // The client gave the call up: nobody will ask for this work (it has no task id yet).
      await engine.cancel(task.id, call.caller, { statusMessage: "The plain call that started it was cancelled" }).catch(() => {});
      throw new TaskError("internal", "The request was abandoned");
    }
    return settled && isTerminal(settled.status)
      ? endedAnswer(settled)
      : backgroundAnswer(settled ?? task, await pendingOf(engine, settled ?? task, call));
  } finally {
    stopProgress();
    logs.stop();
  }
}

/** Forwards the task's log messages to the call until stopped. */
function relayLogs(engine: TaskEngine, taskId: string, send: WaitingCall["sendLog"]): { stop: () => void } {
  if (!send) return { stop: () => {} };
  const stop = engine.bus.onTask(taskId, (event) => {
    if (event.type === "log") void send(event.level, event.data, event.logger).catch(() => {});
  });
  return { stop };
}

/** The answer of a task that ended: what a plain call of its tool would have answered. */
export function endedAnswer(task: TaskRecord): CallToolResult {
  const outcome = task.outcome;
  if (outcome?.kind === "result") return outcome.value as CallToolResult;
  if (outcome?.kind === "error") throw TaskError.protocol(outcome.error.code, outcome.error.message, outcome.error.data);
  return statusAnswer(taskSummary(task), `Task ${task.id} was ${task.status}; it has no result.`, true);
}

/** The answer of a task still going on: its id, its status, and how to follow it. */
export function backgroundAnswer(
  task: TaskRecord,
  pending: Awaited<ReturnType<TaskEngine["pendingInputs"]>>,
  refused?: string,
): CallToolResult {
  const summary = taskSummary(task, pending);
  const why = refused === undefined ? "" : `Your answer to its question was not taken (${refused}); the question is still open. `;
  const sentence =
    why +
    (task.status === "input_required"
      ? `The work goes on in the background as task ${task.id}, and it needs input. Call task_result with {"taskId": "${task.id}"} to be asked (when your client supports elicitation), task_status to see the question, or task_cancel to stop it.`
      : `The work goes on in the background as task ${task.id}. Call task_result with {"taskId": "${task.id}"} to wait for its result (task_status to look, task_cancel to stop it).`);
  return statusAnswer(summary, sentence);
}

function pendingOf(engine: TaskEngine, task: TaskRecord, call: WaitingCall): ReturnType<TaskEngine["pendingInputs"]> {
  return task.status === "input_required" ? engine.pendingInputs(task.id, call.caller) : Promise.resolve([]);
}

/**
 * The task once it ended (or, without a relay, asked for input) within `ms`; null when it did
 * not; "abandoned" when the call's signal aborted first. With a relay (the client can answer
 * questions on this call's stream), a question is relayed instead, and the clock stops while one
 * is out: a person answering is not a task running late. A controller and timers of its own,
 * not AbortSignal.timeout (see core/deadline-signal.ts): this clock stops and starts again.
 */
async function settledWithin(
  engine: TaskEngine,
  task: TaskRecord,
  call: WaitingCall,
  ms: number,
  beforeRelay: () => void,
): Promise<TaskRecord | null | "abandoned" | { refused: string }> {
  const waited = new AbortController();
  const expire = (): void => waited.abort("background after");
  let timer: NodeJS.Timeout | undefined = setTimeout(expire, ms);
  const onHangUp = (): void => waited.abort("abandoned");
  call.signal.addEventListener("abort", onHangUp, { once: true });
  if (call.signal.aborted) onHangUp();
  const stopClock = call.relay
    ? engine.bus.onTask(task.id, (event) => {
        if (event.type !== "status") return;
        if (event.status === "input_required") {
          clearTimeout(timer);
          timer = undefined;
        } else if (timer === undefined && !isTerminal(event.status)) {
          timer = setTimeout(expire, ms);
        }
      })
    : () => {};
  try {
    let asked = false;
    for await (const { task: now } of engine.watch(task.id, call.caller, waited.signal)) {
      if (isTerminal(now.status)) return now;
      if (now.status === "input_required") {
        if (!call.relay) return now;
        asked = true;
        break;
      }
    }
    if (!asked || !call.relay) return null;
    // From the first question on, the era's relay waits, delivering questions on this call's stream.
    beforeRelay();
    let refused: string | undefined;
    await call.relay(task.id, waited.signal).catch((error: unknown) => {
      // An answer that does not fit the question's form (-32602 naming the field) leaves the
      // question open for the next relay (task_result) or the web view: the call answers with
      // the task to reach it by, and why.
      if (error instanceof TaskError && error.kind === "invalid_params") refused = error.message;
    });
    if (call.signal.aborted) return "abandoned";
    if (refused !== undefined) return { refused };
    const now = await engine.get(task.id, call.caller);
    return isTerminal(now.status) ? now : null;
  } catch (error) {
    if (call.signal.aborted) return "abandoned";
    if (waited.signal.aborted) return null;
    throw error;
  } finally {
    clearTimeout(timer);
    stopClock();
    call.signal.removeEventListener("abort", onHangUp);
  }
  return null;
}

/**
 * Relays the task's progress to the call and sends keep-alives while it reports none. Progress
 * must increase from one notification to the next, so keep-alives count 1, 2, 3… without a total,
 * and a task report not above the last value sent is not relayed.
 */
function relayProgress(
  engine: TaskEngine,
  taskId: string,
  keepAliveMs: number,
  send: (progress: TaskProgress) => Promise<void>,
): () => void {
  let last = 0;
  let reported = false;
  const emit = (progress: TaskProgress): void => {
    if (progress.progress <= last) return;
    last = progress.progress;
    void send(progress).catch(() => {});
  };
  const stop = engine.bus.onTask(taskId, (event) => {
    if (event.type !== "progress") return;
    reported = true;
    emit(event.progress);
  });
  const timer = setInterval(() => {
    if (!reported) emit({ progress: last + 1, message: `Still running (task ${taskId})` });
  }, keepAliveMs);
  return () => {
    clearInterval(timer);
    stop();
  };
}
