import { Command, InvalidArgumentError, Option } from "commander";
import { PROTOCOL_REVISIONS, type ProtocolRevision } from "../client/requestor-era.js";
import type { Target } from "./target.js";

/** Options every requestor command takes. */
export interface RequestorOptions {
  stdio?: string;
  token?: string;
  json?: boolean;
  protocol?: ProtocolRevision | "auto";
}

/** Adds --stdio, --token, --protocol, --json; makes usage errors exit 2 (help and version still exit 0). */
export function requestorCommand(name: string): Command {
  return new Command(name)
    .addOption(new Option("--stdio <command>", "talk to a server spawned with this command over stdio (instead of <target>)"))
    .addOption(new Option("--token <token>", "HTTP bearer token").env("MCP_TASKS_TOKEN"))
    .addOption(
      new Option("--protocol <revision>", "speak this protocol revision; auto: server/discover decides, cached per target for an hour (default: auto)")
        .choices([...PROTOCOL_REVISIONS, "auto"])
        .env("MCP_TASKS_PROTOCOL"),
    )
    .option("--json", "machine-readable output on stdout")
    .exitOverride((error) => {
      process.exit(error.code === "commander.helpDisplayed" || error.code === "commander.version" ? 0 : 2);
    });
}

/**
 * Splits positionals into the target and the rest: with --stdio there is no <target> positional.
 * A target must be an http(s) URL.
 */
export function takeTarget(positionals: string[], options: RequestorOptions): { target: Target; rest: string[] } {
  if (options.stdio !== undefined) {
    // 2026-07-28 is stateless HTTP (SEP-2575); a stdio server is spoken to in a session.
    if (options.protocol === "2026-07-28") throw new InvalidArgumentError("--protocol 2026-07-28 needs an http(s) <target>: over --stdio the CLI speaks 2025-11-25");
    return { target: { kind: "stdio", command: options.stdio }, rest: positionals };
  }
  const [first, ...rest] = positionals;
  if (first === undefined) throw new InvalidArgumentError("missing <target>: an http(s) URL, or --stdio <command>");
  let url: URL;
  try {
    url = new URL(first);
  } catch {
    throw new InvalidArgumentError(`not a URL: ${first} (give an http(s) URL, or --stdio <command>)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new InvalidArgumentError(`not an http(s) URL: ${first}`);
  return {
    target: { kind: "http", url: url.href, ...(options.token !== undefined && { token: options.token }), ...(options.protocol !== undefined && options.protocol !== "auto" && { protocol: options.protocol }) },
    rest,
  };
}

/**
 * The target as command-line arguments, for hints the person can paste (shell-quoted; never the
 * token, which the person passes again with --token or MCP_TASKS_TOKEN).
 */
export function targetArgs(target: Target): string {
  return target.kind === "http" ? shellQuote(target.url) : `--stdio ${shellQuote(target.command)}`;
}

function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/** Reports a usage error the way commander does, and exits 2. */
export function usageError(command: Command, error: unknown): never {
  command.error(`error: ${error instanceof Error ? error.message : String(error)}`, { exitCode: 2, code: "mcp-tasks.usage" });
}
