import { Command, Help } from "commander";
import { COMMAND_SUMMARIES, type CommandName } from "./command-summaries.js";
import { telemetryRequested, TRACED_COMMANDS } from "./telemetry-env.js";
import { exitOnUsageErrors } from "./usage-exit.js";

/**
 * Subcommands, loaded on demand: each pulls in its own dependencies (the server side is heavy:
 * SQLite's native addon, pg, prom-client, jose), and a `call` or `tasks` run should not pay for
 * `serve`. The top-level help lists them from their summaries without loading any.
 */
const commands: Record<CommandName, () => Promise<Command>> = {
  serve: async () => (await import("./serve-command.js")).serveCommand(),
  gateway: async () => (await import("./gateway-command.js")).gatewayCommand(),
  worker: async () => (await import("./worker-command.js")).workerCommand(),
  call: async () => (await import("./call-command.js")).callCommand(),
  tasks: async () => (await import("./tasks-command.js")).tasksCommand(),
  tools: async () => (await import("./tools-command.js")).toolsCommand(),
  events: async () => (await import("./events-command.js")).eventsCommand(),
  auth: async () => (await import("./auth-command.js")).authCommand(),
  webhooks: async () => (await import("./webhooks-command.js")).webhooksCommand(),
};

const isCommand = (name: string | undefined): name is CommandName => name !== undefined && Object.hasOwn(commands, name);

const program = new Command("mcp-tasks")
  .description(
    "Durable MCP Tasks in both protocol revisions (2025-11-25, and 2026-07-28 with the tasks extension): serve tools as pollable, cancellable tasks, and call them",
  )
  .version("0.1.0")
  .configureHelp({
    subcommandTerm(command) {
      const name = command.name();
      return isCommand(name) ? COMMAND_SUMMARIES[name].term : Help.prototype.subcommandTerm.call(this, command);
    },
  });

// `mcp-tasks <command> …` and `mcp-tasks help <command>` need that command itself; anything else
// (top-level help, --version, an unknown command) only its name and summary.
const wanted = process.argv[2] === "help" ? process.argv[3] : process.argv[2];
// Tracing: the SDK only when the environment asks for it, before the command's first span.
const asksHelp = process.argv[2] === "help" || process.argv.includes("--help") || process.argv.includes("-h");
const traced = !asksHelp && wanted !== undefined && TRACED_COMMANDS.has(wanted) && telemetryRequested(process.env);
const telemetry = traced ? await import("./telemetry.js") : null;
if (telemetry && wanted) await telemetry.startTelemetry(wanted);
for (const name of Object.keys(commands) as CommandName[]) {
  program.addCommand(name === wanted ? await commands[name]() : new Command(name).description(COMMAND_SUMMARIES[name].description));
}

exitOnUsageErrors(program);

program
  .parseAsync(process.argv)
  // A requestor's command is done when its action is: what its spans buffered goes out before
  // it exits. A server's keeps running and flushes on its way out.
  .then(async () => {
    if (!telemetry || wanted === "serve" || wanted === "worker" || wanted === "gateway") return;
    // An exporter still waiting on a collector that is gone or hangs would hold the process open
    // for its own timeout (and retries): past the wait, the command exits with what it printed.
    if (!(await telemetry.shutdownTelemetry(telemetry.ONE_SHOT_SHUTDOWN_MS)))
      process.stdout.write("", () => process.exit(typeof process.exitCode === "number" ? process.exitCode : 0));
  })
  .catch((error: unknown) => {
    process.stderr.write(`mcp-tasks: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
