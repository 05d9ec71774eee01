import { Command } from "commander";

/**
 * Subcommands, loaded on demand: each pulls in its own dependencies (the server side is heavy),
 * and a `call` or `tasks` run should not pay for `serve`. All are loaded for top-level help.
 */
const commands: Record<string, () => Promise<Command>> = {
  serve: async () => (await import("./serve-command.js")).serveCommand(),
  worker: async () => (await import("./worker-command.js")).workerCommand(),
  call: async () => (await import("./call-command.js")).callCommand(),
  tasks: async () => (await import("./tasks-command.js")).tasksCommand(),
  tools: async () => (await import("./tools-command.js")).toolsCommand(),
};

const program = new Command("mcp-tasks")
  .description("Durable MCP Tasks (revision 2025-11-25): serve tools as pollable, cancellable tasks")
  .version("0.1.0");

const wanted = process.argv[2];
for (const [name, load] of Object.entries(commands)) {
  if (wanted === undefined || !(wanted in commands) || wanted === name) program.addCommand(await load());
}

program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`mcp-tasks: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
