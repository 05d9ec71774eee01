import { Command } from "commander";
import { serveCommand } from "./serve-command.js";
import { workerCommand } from "./worker-command.js";

const program = new Command("mcp-tasks")
  .description("Durable MCP Tasks (revision 2025-11-25): serve tools as pollable, cancellable tasks")
  .version("0.1.0")
  .addCommand(serveCommand())
  .addCommand(workerCommand());

program.parseAsync(process.argv).catch((error: unknown) => {
  process.stderr.write(`mcp-tasks: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
