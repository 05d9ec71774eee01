import type { ToolTask } from "../client/task-client.js";
import { TaskError } from "../core/errors.js";
import { pause } from "../core/pause.js";
import { ConnectionError, InputRefusedError, retryAfterOf } from "../mcp/requestor/requestor-errors.js";
import { authenticationErrorIn } from "./connection-failure.js";
import { exitCodeOf, ExitCode } from "./exit-codes.js";
import { printError, printOutcome, type Output } from "./output.js";
import { askInterrupt } from "./terminal/interactive.js";
import type { ProgressView } from "./terminal/progress-view.js";

/** A new handle on the same task over a new connection (a new session where the era has them), and how to close it. */
export type Reattach = () => Promise<{ task: ToolTask; close(): Promise<void> }>;

export interface FollowOptions {
  /** The target as the person would type it again, for the hints on how to collect the task. */
  target: string;
  /** How to reach the task again when the connection is lost; without it a lost connection ends the command. */
  reattach?: Reattach;
  /** How long to keep trying to reach the task again, ms. Default {@link REATTACH_MS} (MCP_TASKS_REATTACH_MS). */
  reattachMs?: number;
}

/** Why following ended when Ctrl-C → Cancel could not reach the server (the other reason is "detach"). */
const CANCEL_UNSENT = "cancel_unsent";

/** How long a lost connection is retried before the command gives up (the task is not given up: it goes on). */
export const REATTACH_MS = 60_000;
const RETRY_DELAY_MS = 500;
/** The longest a server's "come back in …" is heeded before trying again (the window still bounds the whole). */
const MAX_COME_BACK_MS = 5_000;

/**
 * Waits for a task's outcome while showing its status (and progress) live, prints how it ended and
 * returns the exit code. The era's handle waits for the outcome (2025-11-25: `tasks/result` at once,
 * so questions reach the terminal whenever they come, T-INPUT-3; 2026-07-28: polling `tasks/get`),
 * and the status is followed meanwhile (T-GET-2). Ctrl-C asks whether to detach or cancel (without
 * a terminal: detach).
 *
 * A lost connection (the server killed or restarted, a network cut) is not the task's end: the task
 * is reached again by id (a new connection, and a new session under 2025-11-25) and followed to its
 * real end; when it cannot be reached within `reattachMs`, the command says the task may still be
 * running and how to collect it, and exits with the connection code (4). A poll that fails while the
 * outcome wait still hangs counts as a lost connection too, so the bar never freezes on a dead one.
 */
export async function followTask(
  first: ToolTask,
  out: Output,
  view: ProgressView | null,
  options: FollowOptions | string,
): Promise<number> {
  const { target, reattach, reattachMs = reattachWindow() } = typeof options === "string" ? { target: options } : options;
  let task = first;
  let closeCurrent: (() => Promise<void>) | null = null;
  const detached = new AbortController();
  // Set when a cancel could not reach the server: it is sent over the next connection.
  let cancelOwed = false;
  // Ends the current connection's following at once (a cancel found the connection dead).
  let connectionLost = new AbortController();
  let interrupting = false;
  const onSigint = (): void => {
    if (interrupting) return;
    interrupting = true;
    void (async () => {
      const choice = view ? await view.suspend(() => askInterrupt(task.id)) : "detach";
      if (choice === "detach") detached.abort("detach");
      else if (choice === "cancel") {
        await task.cancel().catch((error: unknown) => {
          // A transport failure of any shape (a refused connection, a body cut off by a killed
          // server, a session the restarted server no longer knows) means the cancel never
          // arrived. Where the task can be reached again, the cancel goes over the new
          // connection; otherwise the command ends here and says how to send it later
          // (written once the bar is gone, not into it).
          if (!transient(error)) printError(out, error, { taskId: task.id, status: task.last?.status });
          else if (reattach) {
            cancelOwed = true;
            view?.status(task.last?.status ?? "working", "connection lost — reconnecting to send the cancel…");
            connectionLost.abort();
          } else detached.abort(CANCEL_UNSENT);
        });
      }
      interrupting = false;
    })();
  };
  process.on("SIGINT", onSigint);
  view?.task(task.id);
  view?.start();
  if (task.last) view?.status(task.last.status, task.last.statusMessage);
  try {
    for (;;) {
      connectionLost = new AbortController();
      if (cancelOwed) {
        cancelOwed = false;
        const unsent = await task.cancel().then(
          () => false,
          (error: unknown) => {
            if (transient(error)) return true;
            printError(out, error, { taskId: task.id, status: task.last?.status });
            return false;
          },
        );
        // Lost again before it arrived: still owed, and this connection is no better than the last.
        if (unsent) {
          cancelOwed = true;
          connectionLost.abort();
        }
      }
      const attempt = await followOnce(task, view, detached.signal, connectionLost.signal);
      if (attempt.kind === "outcome") {
        view?.finish(attempt.outcome.status);
        return printOutcome(out, task.id, attempt.outcome);
      }
      if (attempt.kind === "detached") {
        view?.stop();
        if (detached.signal.reason === CANCEL_UNSENT) return cancelUnsent(out, target, task.id);
        if (out.json) out.stdout.write(`${JSON.stringify({ taskId: task.id, status: "detached" })}\n`);
        else out.stdout.write(`${task.id}\n`);
        out.stderr.write(`Detached; the task goes on. Collect it with: mcp-tasks tasks result ${target} ${task.id}\n`);
        return ExitCode.Detached;
      }
      if (attempt.kind === "error" && !transient(attempt.error)) {
        view?.finish("failed");
        printError(out, attempt.error, { taskId: task.id, status: task.last?.status, ttl: task.last?.ttl });
        if (attempt.error instanceof InputRefusedError) {
          out.stderr.write(
            `The task still waits for that answer: answer it at a terminal with mcp-tasks tasks result ${target} ${task.id}, or cancel it with mcp-tasks tasks cancel ${target} ${task.id}\n`,
          );
        }
        return exitCodeOf(attempt.error);
      }
      // The connection is lost, or the server asked to come back later (its store unreachable for
      // a moment, a drain): the task goes on either way. Reach it again, or say it may still be running.
      const comeBack = attempt.kind === "error" ? retryAfterOf(attempt.error) : undefined;
      const why = comeBack === undefined ? "connection lost" : "the server asked to come back later";
      view?.status(task.last?.status ?? "working", cancelOwed ? `${why} — reconnecting to send the cancel…` : `${why} — reconnecting…`);
      if (comeBack !== undefined) await wait(backOff(comeBack), detached.signal);
      const again = reattach ? await reach(reattach, reattachMs, detached.signal) : null;
      if (again === "detached") continue;
      if (again === null || "error" in again) {
        if (again !== null && !transient(again.error)) {
          view?.finish("failed");
          printError(out, again.error, { taskId: task.id, status: task.last?.status, ttl: task.last?.ttl });
          return exitCodeOf(again.error);
        }
        view?.stop();
        if (cancelOwed) return cancelUnsent(out, target, task.id);
        const lost = { taskId: task.id, status: "connection_lost", error: { message: "connection lost; the task may still be running" } };
        if (out.json) out.stdout.write(`${JSON.stringify(lost)}\n`);
        out.stderr.write(`mcp-tasks: connection lost; the task may still be running: mcp-tasks tasks result ${target} ${task.id}\n`);
        return ExitCode.Connection;
      }
      task.dispose();
      await closeCurrent?.();
      task = again.task;
      closeCurrent = again.close;
      if (task.last) view?.status(task.last.status, task.last.statusMessage);
    }
  } finally {
    process.off("SIGINT", onSigint);
    await closeCurrent?.();
  }
}

/** The end of a command whose cancel never reached the server: what to run to send it. */
function cancelUnsent(out: Output, target: string, taskId: string): number {
  if (out.json)
    out.stdout.write(
      `${JSON.stringify({ taskId, status: "connection_lost", error: { message: "connection lost; the cancel was not sent" } })}\n`,
    );
  out.stderr.write(
    `mcp-tasks: could not cancel the task: the connection to the server is lost; try again with: mcp-tasks tasks cancel ${target} ${taskId}\n`,
  );
  return ExitCode.Connection;
}

type Attempt =
  { kind: "outcome"; outcome: Awaited<ReturnType<ToolTask["outcome"]>> } | { kind: "detached" } | { kind: "error"; error: unknown };

/** One connection's worth of following: the outcome, a detach, or the error that ended it (a failed poll included). */
async function followOnce(task: ToolTask, view: ProgressView | null, detached: AbortSignal, lost: AbortSignal): Promise<Attempt> {
  const stop = new AbortController();
  const onDetach = (): void => stop.abort("detach");
  detached.addEventListener("abort", onDetach, { once: true });
  if (detached.aborted) onDetach();
  const cutOff = new Promise<Attempt>((resolve) => {
    const onLost = (): void => resolve({ kind: "error", error: new ConnectionError("connection lost") });
    if (lost.aborted) onLost();
    else lost.addEventListener("abort", onLost, { once: true });
  });
  const polled = (async (): Promise<Attempt> => {
    try {
      for await (const update of task.updates({ signal: stop.signal })) view?.status(update.status, update.statusMessage);
    } catch (error) {
      // A poll that cannot reach the server: the outcome wait would hang on the same dead connection.
      // Only the server's own answer (a RemoteError: not found, …) is about the task.
      if (!stop.signal.aborted) return { kind: "error", error: asLost(error) };
    }
    return new Promise<never>(() => {});
  })();
  const waited = task.outcome({ signal: stop.signal }).then(
    (outcome): Attempt => ({ kind: "outcome", outcome }),
    (error: unknown): Attempt => (detached.aborted ? { kind: "detached" } : { kind: "error", error: asLost(error) }),
  );
  try {
    return await Promise.race([waited, polled, cutOff]);
  } finally {
    stop.abort("done");
    detached.removeEventListener("abort", onDetach);
  }
}

/** Tries `reattach` until it works, the server answers that the task is not there, the window closes, or the person detaches. */
async function reach(
  reattach: Reattach,
  windowMs: number,
  detached: AbortSignal,
): Promise<Awaited<ReturnType<Reattach>> | { error: unknown } | "detached" | null> {
  const deadline = Date.now() + windowMs;
  let last: unknown = null;
  while (Date.now() < deadline) {
    if (detached.aborted) return "detached";
    let delayMs = RETRY_DELAY_MS;
    try {
      return await reattach();
    } catch (error) {
      const comeBack = retryAfterOf(error);
      if (comeBack === undefined && (!(error instanceof ConnectionError) || authenticationErrorIn(error))) return { error };
      if (comeBack !== undefined) delayMs = backOff(comeBack);
      last = error;
    }
    await wait(Math.min(delayMs, Math.max(0, deadline - Date.now())), detached);
  }
  return last === null ? null : { error: last };
}

/**
 * Whether an error leaves the task to be reached again rather than ending the command: a lost
 * connection, or the server's answer that it cannot serve the request now but will later.
 */
function transient(error: unknown): boolean {
  return asLost(error) instanceof ConnectionError || retryAfterOf(error) !== undefined;
}

/** How long to wait when the server asked for `retryAfterMs`: at least the usual retry delay, at most {@link MAX_COME_BACK_MS}. */
function backOff(retryAfterMs: number): number {
  return Math.min(Math.max(retryAfterMs, RETRY_DELAY_MS), MAX_COME_BACK_MS);
}

/** Waits `ms`, or less if the person detaches meanwhile (the caller looks at the signal next). */
/** Waits `ms`, or less when the person detaches: either way the caller goes on and looks. */
function wait(ms: number, detached: AbortSignal): Promise<void> {
  return pause(ms, detached).catch(() => undefined);
}

/** A failure that is not the server's answer about the task (a closed stream, a refused connection, a lost session) as a lost connection. */
function asLost(error: unknown): unknown {
  // Ours say what they are (a ConnectionError, the server's RemoteError, a cancellation, a local refusal).
  if (error instanceof TaskError) return error;
  return new ConnectionError(error instanceof Error ? error.message : String(error), undefined, error);
}

function reattachWindow(): number {
  const given = Number(process.env["MCP_TASKS_REATTACH_MS"]);
  return Number.isFinite(given) && given >= 0 && process.env["MCP_TASKS_REATTACH_MS"] !== undefined ? given : REATTACH_MS;
}
