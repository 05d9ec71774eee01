import { type Command, InvalidArgumentError } from "commander";
import { GatewayConfig, loadGatewayConfig } from "../gateway/gateway-config.js";
import { parseHeader, splitCommandLine, type UpstreamTarget } from "../gateway/upstream-target.js";
import { positiveInt } from "./options.js";

/** Default of `--upstream-timeout`: long silences are normal for slow tools, endless ones are not. */
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 300_000;

/**
 * The flags that name a gateway's upstream and how its tools are offered. `gateway` takes them,
 * and so does `worker`: in cluster mode a gateway's tasks run on workers, which need the same
 * upstream (the tools' handlers are calls to it) and the same config.
 */
export interface UpstreamFlags {
  upstreamStdio?: string;
  upstreamUrl?: string;
  upstreamHeader: string[];
  config?: string;
  upstreamTimeout: number;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Adds the upstream flags to a command. */
export function upstreamOptions(command: Command): Command {
  return command
    .option("--upstream-stdio <command>", "the upstream MCP server: a command line the gateway starts and talks to over stdio (restarted with backoff when it exits)")
    .option("--upstream-url <url>", "the upstream MCP server: its Streamable HTTP URL")
    .option("--upstream-header <header>", 'header sent to an --upstream-url with every request, "Name: value" (repeatable; never logged)', collect, [])
    .option("--upstream-timeout <ms>", "longest an upstream call may go without an answer or progress before its task fails", positiveInt, DEFAULT_UPSTREAM_TIMEOUT_MS)
    .option("--config <file>", "gateway config (JSON): per tool taskSupport, ttl, recovery, immediateResponse, timeoutMs");
}

/** Whether any flag naming an upstream was given (a worker without one runs --demo/--tools only). */
export function namesUpstream(opts: UpstreamFlags): boolean {
  return opts.upstreamStdio !== undefined || opts.upstreamUrl !== undefined;
}

/** The gateway config `--config` names (an empty one without it); a malformed file is a usage error. */
export function gatewayConfigOf(opts: UpstreamFlags): GatewayConfig {
  try {
    return opts.config === undefined ? new GatewayConfig() : loadGatewayConfig(opts.config);
  } catch (error) {
    throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
  }
}

/** The upstream the flags name: exactly one of --upstream-stdio and --upstream-url. */
export function upstreamOf(opts: UpstreamFlags): UpstreamTarget {
  if ((opts.upstreamStdio === undefined) === (opts.upstreamUrl === undefined)) {
    throw new InvalidArgumentError("pass exactly one of --upstream-stdio COMMAND and --upstream-url URL");
  }
  if (opts.upstreamStdio !== undefined) {
    if (opts.upstreamHeader.length > 0) throw new InvalidArgumentError("--upstream-header goes with --upstream-url only");
    let words: string[];
    try {
      words = splitCommandLine(opts.upstreamStdio);
    } catch (error) {
      throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
    }
    const [program, ...args] = words;
    if (program === undefined) throw new InvalidArgumentError("--upstream-stdio needs a command");
    return { kind: "stdio", command: program, args };
  }
  let url: URL;
  try {
    url = new URL(opts.upstreamUrl ?? "");
  } catch {
    throw new InvalidArgumentError("--upstream-url must be an http(s) URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new InvalidArgumentError("--upstream-url must be an http(s) URL");
  const headers: Record<string, string> = {};
  for (const flag of opts.upstreamHeader) {
    try {
      const [name, value] = parseHeader(flag);
      headers[name] = value;
    } catch (error) {
      throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
    }
  }
  return { kind: "url", url, headers };
}
