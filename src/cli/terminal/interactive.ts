import { McpError } from "@modelcontextprotocol/sdk/types.js";
import type { ElicitHandler, SampleHandler } from "../../client/receiver.js";
import { ExitCode } from "../exit-codes.js";
import { answerProblem } from "./answer-check.js";
import { promptElicitation } from "./elicit-prompt.js";
import type { ProgressView } from "./progress-view.js";
import { inquirer, prompts } from "./prompts.js";
import { promptSampling } from "./sample-prompt.js";
import { writesSettled } from "../pending-writes.js";

/**
 * A person at a terminal (stdin and stderr are TTYs) and the prompts to ask them with
 * (@inquirer/prompts, an optional peer dependency): questions can be asked.
 */
export function isInteractive(): boolean {
  return Boolean(process.stdin.isTTY && process.stderr.isTTY) && inquirer() !== null;
}

/**
 * The CLI's answers to the server's requests. Interactive: prompts on stderr (stdout stays for
 * results), the progress view suspended meanwhile, the prompt withdrawn if the server withdraws
 * the request. Not interactive: nobody can answer — elicitations are answered "cancel" (the
 * user did not respond) and sampling is refused, each with a note on stderr. `answers` (the
 * `--answer` options) accept elicitations in order, before any of that.
 */
export function terminalHandlers(
  view: ProgressView | null,
  answers: Array<Record<string, unknown>> = [],
  target = "<target>",
): { elicit: ElicitHandler; sample: SampleHandler } {
  const context = (signal: AbortSignal) => ({ output: process.stderr, signal, clearPromptOnDone: false });
  const note = (text: string) => (view ? view.line(text) : process.stderr.write(`${text}\n`));
  const given = [...answers];
  return {
    async elicit(params, info) {
      // --answer: the next given content accepts the question, prompt or not (scripts, CI), once
      // it fits the question's schema; one that does not is never sent, so the question stays open.
      const content = given.shift();
      if (content !== undefined) {
        const problem = params.mode === "url" ? null : answerProblem(params, content);
        if (problem === null) {
          note(`The server asked "${params.message}": answered with --answer ${JSON.stringify(content)}.`);
          return { action: "accept", content: content as never };
        }
        const refused = `--answer ${JSON.stringify(content)} does not fit the question "${params.message}": ${problem}`;
        if (!isInteractive() || params.mode === "url") return leaveUnanswered(view, refused, info.relatedTaskId, target);
        note(`${refused}. Asking instead.`);
      }
      if (params.mode === "url" || !isInteractive()) {
        note(`The server asked "${params.message}" but there is no terminal to answer: answered "cancel".`);
        return { action: "cancel" };
      }
      const ask = () => promptElicitation(params, context(info.signal));
      return view ? view.suspend(ask) : ask();
    },
    async sample(params, info) {
      if (!isInteractive()) {
        note("The server asked for a model reply (sampling) but there is no terminal to answer: refused.");
        throw new McpError(-1, "No one is at the terminal to answer the sampling request");
      }
      const ask = () => promptSampling(params, context(info.signal), (text) => process.stderr.write(text));
      return view ? view.suspend(ask) : ask();
    },
  };
}

/**
 * Ends the command without answering (exit 2, a usage error): nothing is sent, so the question
 * stays open on the server — a task's to be answered by a later `tasks result --answer`, which
 * finds the task in the journal once the journal's writes have landed.
 */
async function leaveUnanswered(view: ProgressView | null, refused: string, taskId: string | null, target: string): Promise<never> {
  view?.stop();
  const later =
    taskId !== null
      ? ` Nothing was sent; the question stays open: answer it with mcp-tasks tasks result ${target} ${taskId} --answer '{…}'`
      : " Nothing was sent.";
  process.stderr.write(`mcp-tasks: ${refused}.${later}\n`);
  await writesSettled();
  process.exit(ExitCode.Usage);
}

/** Ctrl-C while a task runs: what the person wants. A second Ctrl-C means "detach". */
export async function askInterrupt(taskId: string): Promise<"detach" | "cancel" | "wait"> {
  try {
    return await prompts().select<"detach" | "cancel" | "wait">(
      {
        message: `Task ${taskId} is still running. What now?`,
        choices: [
          { name: "Detach (the task goes on; collect it later with `mcp-tasks tasks result`)", value: "detach" },
          { name: "Cancel the task", value: "cancel" },
          { name: "Keep waiting", value: "wait" },
        ],
      },
      { output: process.stderr, clearPromptOnDone: true },
    );
  } catch {
    return "detach";
  }
}
