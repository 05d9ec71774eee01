import type { ToolTask } from "../client/task-client.js";
import { exitCodeOf, ExitCode } from "./exit-codes.js";
import { printError, printOutcome, type Output } from "./output.js";
import { askInterrupt } from "./terminal/interactive.js";
import type { ProgressView } from "./terminal/progress-view.js";

/**
 * Waits for a task's outcome while showing its status (and progress) live, prints how it ended and
 * returns the exit code. `tasks/result` is called at once, so questions the task asks reach the
 * terminal whenever they come (T-INPUT-3); status is polled meanwhile (T-GET-2). Ctrl-C asks
 * whether to detach or cancel (without a terminal: detach). `target` is the target as the person
 * would type it again, for the hint on how to collect a detached task.
 */
export async function followTask(task: ToolTask, out: Output, view: ProgressView | null, target: string): Promise<number> {
  const waiting = new AbortController();
  const stopUpdates = new AbortController();
  let interrupting = false;
  const onSigint = (): void => {
    if (interrupting) return;
    interrupting = true;
    void (async () => {
      const choice = view ? await view.suspend(() => askInterrupt(task.id)) : "detach";
      if (choice === "detach") waiting.abort("detach");
      else if (choice === "cancel") {
        await task.cancel().catch((error: unknown) => printError(out, error));
      }
      interrupting = false;
    })();
  };
  process.on("SIGINT", onSigint);
  view?.task(task.id);
  view?.start();
  if (task.last) view?.status(task.last.status, task.last.statusMessage);
  void (async () => {
    try {
      for await (const update of task.updates({ signal: stopUpdates.signal })) view?.status(update.status, update.statusMessage);
    } catch {
      // Polling stops with the command; a failed poll is not the outcome.
    }
  })();
  try {
    const outcome = await task.outcome({ signal: waiting.signal });
    view?.finish(outcome.status);
    return printOutcome(out, task.id, outcome);
  } catch (error) {
    if (waiting.signal.aborted) {
      view?.stop();
      if (out.json) out.stdout.write(`${JSON.stringify({ taskId: task.id, status: "detached" })}\n`);
      else out.stdout.write(`${task.id}\n`);
      out.stderr.write(`Detached; the task goes on. Collect it with: mcp-tasks tasks result ${target} ${task.id}\n`);
      return ExitCode.Detached;
    }
    view?.finish("failed");
    printError(out, error, { taskId: task.id, ttl: task.last?.ttl });
    return exitCodeOf(error);
  } finally {
    process.off("SIGINT", onSigint);
    stopUpdates.abort();
  }
}
