import { Command } from "commander";
import { answerObject, nonNegativeInt } from "./options.js";
import { exitCodeOf, ExitCode } from "./exit-codes.js";
import { followTask } from "./follow-task.js";
import { reattachTo } from "./reattach.js";
import { printError, printOutcome, type Output } from "./output.js";
import { positionalArguments, requestorCommand, takeTarget, targetArgs, usageError, type RequestorOptions } from "./requestor-options.js";
import { stateDir } from "./state-dir.js";
import { closest } from "./edit-distance.js";
import { connectTarget, type Connection } from "./target.js";
import { isInteractive, terminalHandlers } from "./terminal/interactive.js";
import { ProgressView } from "./terminal/progress-view.js";
import { COMMAND_SUMMARIES } from "./command-summaries.js";
import { traceparentValue, underTraceparent } from "./traceparent-option.js";

interface CallOptions extends RequestorOptions {
  task?: boolean;
  ttl?: number;
  idempotencyKey?: string;
  detach?: boolean;
  answer?: Array<Record<string, unknown>>;
  traceparent?: string;
}

export function callCommand(): Command {
  const command: Command = requestorCommand("call")
    .description(COMMAND_SUMMARIES.call.description)
    .usage("<target> <tool> [json-args] [options]\n       mcp-tasks call --stdio <command> <tool> [json-args] [options]")
    .option("--task", "call as a task (refused if the server or the tool does not allow it)")
    .option("--no-task", "call plainly (refused if the tool requires a task)")
    .option("--ttl <ms>", "requested task ttl in ms", nonNegativeInt)
    .option(
      "--idempotency-key <key>",
      "name the call (SEP-3182): the same call sent again with this key gets the same task or result, and does not run twice",
    )
    .option("--detach", "print the task id and exit; collect it later with `mcp-tasks tasks result`")
    .option(
      "--answer <json>",
      "accept the server's next elicitation with this content, without prompting (repeatable, used in order; checked against the question's schema)",
      answerObject,
    )
    .option(
      "--traceparent <value>",
      "run the call as a child of this W3C traceparent (a script's trace): its requests carry it in _meta",
      traceparentValue,
    );
  return positionalArguments(
    command,
    [
      ["tool", "the tool to call"],
      ["json-args", "its arguments, a JSON object (default {})"],
    ],
    async (positionals, opts: CallOptions) => {
      process.exitCode = await underTraceparent(opts.traceparent, () => runCall(command, positionals, opts));
    },
  );
}

async function runCall(command: Command, positionals: string[], opts: CallOptions): Promise<number> {
  let parsed;
  try {
    const { target, rest } = takeTarget(positionals, opts);
    const [tool, json, ...extra] = rest;
    if (tool === undefined) throw new Error("missing <tool>");
    if (extra.length > 0) throw new Error(`unexpected arguments: ${extra.join(" ")}`);
    parsed = { target, tool, args: parseArgs(json) };
    if (opts.detach && opts.task === false) throw new Error("--detach needs a task: drop --no-task");
  } catch (error) {
    usageError(command, error);
  }
  const out: Output = { json: opts.json === true, stdout: process.stdout, stderr: process.stderr };
  const view = isInteractive() && !opts.detach ? new ProgressView(process.stderr) : null;
  const handlers = terminalHandlers(view, opts.answer, targetArgs(parsed.target));
  let connection;
  try {
    connection = await connectTarget(parsed.target, handlers, stateDir());
  } catch (error) {
    printError(out, error, NO_TASK);
    return exitCodeOf(error);
  }
  if (opts.ttl !== undefined && !connection.tasks.features.sendsTtl) {
    // X-CAP-4: the client states no task preference under 2026-07-28, its ttl included.
    process.stderr.write(`Note: --ttl is not sent under ${connection.tasks.protocol}: the server's default ttl applies.\n`);
  }
  const unknown = await unknownToolMessage(connection, parsed.tool);
  if (unknown !== null) {
    view?.stop();
    printError(out, new Error(unknown), NO_TASK);
    await connection.close();
    return ExitCode.Usage;
  }
  const interrupted = new AbortController();
  const onSigint = (): void => interrupted.abort("interrupted");
  try {
    // A plain call (or the creation of a task) interrupted by Ctrl-C is withdrawn (notifications/cancelled).
    process.on("SIGINT", onSigint);
    view?.begin();
    const call = await connection.tasks.callTool(parsed.tool, parsed.args, {
      ...(opts.task !== undefined && { task: opts.task }),
      ...(opts.detach && { task: true }),
      ...(opts.ttl !== undefined && { ttl: opts.ttl }),
      ...(opts.idempotencyKey !== undefined && { idempotencyKey: opts.idempotencyKey }),
      signal: interrupted.signal,
      onProgress: (p) => view?.progress(p.progress, p.total, p.message),
    });
    process.off("SIGINT", onSigint);
    if (call.kind === "result") {
      const outcome = call.result.isError
        ? { status: "failed" as const, result: call.result }
        : { status: "completed" as const, result: call.result };
      view?.finish(outcome.status);
      // The server answered at once (2026-07-28: it decides, X-CAP-4): there is no task to detach
      // from, nor the task --task asked for; said, so the task's absence is not a surprise later.
      if (opts.detach || opts.task === true)
        process.stderr.write("No task was created: the server answered the call at once; its result follows.\n");
      return printOutcome(out, null, outcome);
    }
    if (opts.detach) {
      // The id alone on a line (or JSON with taskId): scripts capture it.
      out.stdout.write(
        out.json ? `${JSON.stringify({ taskId: call.task.id, status: call.task.last?.status ?? "working" })}\n` : `${call.task.id}\n`,
      );
      if (parsed.target.kind === "stdio") {
        // Detach means now: the spawned server keeps the task in its store and is not waited for.
        await connection.settle();
        process.exit(ExitCode.Ok);
      }
      return ExitCode.Ok;
    }
    // T-NEW-3: what the server says while the task runs, for the human.
    if (call.immediateResponse && !out.json) {
      if (view) view.line(call.immediateResponse);
      else process.stderr.write(`${call.immediateResponse}\n`);
    }
    const taskId = call.task.id;
    const target = parsed.target;
    const onProgress = (p: { progress: number; total?: number; message?: string }): void => view?.progress(p.progress, p.total, p.message);
    const reattach = reattachTo(target, taskId, handlers, stateDir(), onProgress);
    return await followTask(call.task, out, view, { target: targetArgs(target), ...(reattach && { reattach }) });
  } catch (error) {
    view?.finish(interrupted.signal.aborted ? "cancelled" : "failed");
    if (interrupted.signal.aborted) {
      process.stderr.write("Interrupted: the call was withdrawn.\n");
      return ExitCode.Cancelled;
    }
    printError(out, error, NO_TASK);
    return exitCodeOf(error);
  } finally {
    process.off("SIGINT", onSigint);
    await connection.close();
  }
}

/** Under --json, an error before any task was created says `"taskId": null, "status": null`, as the documented shape has them. */
const NO_TASK = { taskId: null, status: null };

/**
 * Null when the server lists `tool` (or cannot list its tools: then the server's own error on the
 * call says what is wrong); else the message for a misspelt name, with the closest names.
 */
async function unknownToolMessage(connection: Connection, tool: string): Promise<string | null> {
  const names = await connection.tasks.listTools().then(
    (tools) => tools.map((t) => t.name),
    () => null,
  );
  if (names === null || names.includes(tool)) return null;
  const near = closest(tool, names);
  const hint = near.length > 0 ? ` Did you mean ${near.map((n) => `"${n}"`).join(" or ")}?` : "";
  return `unknown tool "${tool}" on ${connection.label}.${hint} (\`mcp-tasks tools list\` shows them all)`;
}

/** `[json-args]`: a JSON object (default {}). */
function parseArgs(json: string | undefined): Record<string, unknown> {
  if (json === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new Error(`[json-args] is not valid JSON: ${json}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("[json-args] must be a JSON object");
  return value as Record<string, unknown>;
}
