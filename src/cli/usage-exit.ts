import type { Command } from "commander";
import { ExitCode } from "./exit-codes.js";

/**
 * Makes every usage error of `command` and the commands under it exit 2 (ExitCode.Usage): an
 * unknown command or option, a missing argument, and a command run without the subcommand it needs
 * (`mcp-tasks` alone, `mcp-tasks tasks`), whose usage commander prints first. Help and --version
 * asked for still exit 0.
 */
export function exitOnUsageErrors(command: Command): Command {
  command.exitOverride((error) => process.exit(error.exitCode === 0 ? ExitCode.Ok : ExitCode.Usage));
  for (const sub of command.commands) exitOnUsageErrors(sub);
  return command;
}
