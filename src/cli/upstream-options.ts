import { type Command, InvalidArgumentError } from "commander";
import type { Root } from "@modelcontextprotocol/sdk/types.js";
import { GatewayConfig, loadGatewayConfig } from "../gateway/gateway-config.js";
import { rootOf } from "../gateway/gateway-roots.js";
import { DEFAULT_MAX_UPSTREAMS, DEFAULT_UPSTREAM_IDLE_MS, type PerPrincipalOptions } from "../gateway/upstream-pool.js";
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
  upstreamPerPrincipal?: boolean;
  upstreamMaxProcesses?: number;
  upstreamIdle?: number;
  root: string[];
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Adds the upstream flags to a command. */
export function upstreamOptions(command: Command): Command {
  return command
    .option(
      "--upstream-stdio <command>",
      "the upstream MCP server: a command line the gateway starts and talks to over stdio (restarted with backoff when it exits)",
    )
    .option("--upstream-url <url>", "the upstream MCP server: its Streamable HTTP URL")
    .option(
      "--upstream-header <header>",
      'header sent to an --upstream-url with every request, "Name: value" (repeatable; never logged)',
      collect,
      [],
    )
    .option(
      "--upstream-timeout <ms>",
      "longest an upstream call may go without an answer or progress before its task fails",
      positiveInt,
      DEFAULT_UPSTREAM_TIMEOUT_MS,
    )
    .option(
      "--upstream-per-principal",
      "start one --upstream-stdio process per authenticated principal for its tool calls, so no two principals' calls, questions or samplings share a process",
    )
    .option(
      "--upstream-max-processes <n>",
      `per-principal upstream processes at most at once (default ${DEFAULT_MAX_UPSTREAMS})`,
      positiveInt,
    )
    .option(
      "--upstream-idle <ms>",
      `end a principal's upstream process after this long without a call (default ${DEFAULT_UPSTREAM_IDLE_MS})`,
      positiveInt,
    )
    .option(
      "--root <path-or-uri>",
      "a root the upstream's roots/list is answered with when no requestor is asked (repeatable; adds to the config's roots)",
      collect,
      [],
    )
    .option(
      "--config <file>",
      "gateway config (JSON): per tool taskSupport, ttl, recovery, retries, immediateResponse, timeoutMs; roots; upstreamPerPrincipal",
    );
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

/** How the gateway runs its upstream beyond the target: per-principal processes and roots, from the flags over the config file. */
export interface UpstreamRunOptions {
  perPrincipal?: PerPrincipalOptions;
  roots: Root[];
}

export function upstreamRunOptionsOf(opts: UpstreamFlags, config: GatewayConfig, upstream: UpstreamTarget): UpstreamRunOptions {
  const perPrincipal = perPrincipalOf(opts, config, upstream);
  const roots = [...config.roots(), ...opts.root.map((flag) => rootOf(flag))];
  return { roots, ...(perPrincipal && { perPrincipal }) };
}

/** One process per principal, from the flags over the config file; null when neither asks for it. */
function perPrincipalOf(opts: UpstreamFlags, config: GatewayConfig, upstream: UpstreamTarget): PerPrincipalOptions | null {
  const file = config.perPrincipal();
  const bounded = opts.upstreamMaxProcesses !== undefined || opts.upstreamIdle !== undefined;
  if (!opts.upstreamPerPrincipal && file === null) {
    if (bounded) throw new InvalidArgumentError("--upstream-max-processes and --upstream-idle go with --upstream-per-principal");
    return null;
  }
  if (upstream.kind !== "stdio")
    throw new InvalidArgumentError(
      "one upstream process per principal needs --upstream-stdio (a URL upstream is one server, not a process the gateway starts)",
    );
  return {
    maxUpstreams: opts.upstreamMaxProcesses ?? file?.maxUpstreams ?? DEFAULT_MAX_UPSTREAMS,
    idleMs: opts.upstreamIdle ?? file?.idleMs ?? DEFAULT_UPSTREAM_IDLE_MS,
  };
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
