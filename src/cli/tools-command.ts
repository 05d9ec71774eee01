import { COMMAND_SUMMARIES } from "./command-summaries.js";
import { Command } from "commander";
import { exitCodeOf, ExitCode } from "./exit-codes.js";
import { printError, type Output } from "./output.js";
import { positionalArguments, requestorCommand, takeTarget, usageError, type RequestorOptions } from "./requestor-options.js";
import { stateDir } from "./state-dir.js";
import { renderTable } from "./table.js";
import { connectTarget, type Target } from "./target.js";
import { terminalHandlers } from "./terminal/interactive.js";
import { pausedShown, summaryOf, taskSupportShown } from "./tool-list.js";
import { toolPauseCommand } from "./tool-pause-command.js";

/**
 * `mcp-tasks tools list <target>`: what can be called, and how (T-TOOL-2 taskSupport), and which
 * tools an operator paused; `tools pause | resume <url> <tool>` (tool-pause-command.ts).
 */
export function toolsCommand(): Command {
  const tools = new Command("tools").description(COMMAND_SUMMARIES.tools.description);
  const command: Command = requestorCommand("list")
    .description("list the server's tools (every page of tools/list) with their taskSupport")
    .usage("<target> [options]\n       mcp-tasks tools list --stdio <command>");
  positionalArguments(command, [], async (positionals, opts: RequestorOptions) => {
    let target: Target;
    try {
      const taken = takeTarget(positionals, opts);
      if (taken.rest.length > 0) throw new Error(`unexpected arguments: ${taken.rest.join(" ")}`);
      target = taken.target;
    } catch (error) {
      usageError(command, error);
    }
    process.exitCode = await list(target, { json: opts.json === true, stdout: process.stdout, stderr: process.stderr });
  });
  tools.addCommand(command);
  tools.addCommand(toolPauseCommand("pause"));
  tools.addCommand(toolPauseCommand("resume"));
  return tools;
}

async function list(target: Target, out: Output): Promise<number> {
  let connection;
  try {
    connection = await connectTarget(target, terminalHandlers(null), stateDir());
  } catch (error) {
    printError(out, error);
    return exitCodeOf(error);
  }
  try {
    const tools = await connection.tasks.listTools();
    const tasks = connection.tasks;
    const support = await Promise.all(tools.map((t) => taskSupportShown(tasks, t)));
    // --json: the tools as listed, each with the task support read from the era's wire (`taskSupport`) and whether it is paused.
    if (out.json)
      out.stdout.write(
        `${JSON.stringify({ tools: tools.map((t, i) => ({ ...t, taskSupport: support[i], paused: pausedShown(t) === "paused" })) })}\n`,
      );
    else if (tools.length === 0) out.stderr.write("no tools\n");
    else
      out.stdout.write(
        renderTable(
          ["name", "taskSupport", "paused", "description"],
          tools.map((t, i) => [t.name, support[i] ?? "", pausedShown(t), summaryOf(t)]),
        ),
      );
    return ExitCode.Ok;
  } catch (error) {
    printError(out, error);
    return exitCodeOf(error);
  } finally {
    await connection.close();
  }
}
