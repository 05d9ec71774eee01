/**
 * The `serve` flags about who is calling (docs/limits.md, "Security"): the
 * per-caller rate limits (T-SEC-4), how peers are told apart, what tasks are bound to without
 * authentication, and what the audit log may carry (T-SEC-5).
 */
import { InvalidArgumentError, Option } from "commander";
import type { TaskServerOptions } from "../mcp/task-server.js";
import type { TaskBinding } from "../mcp/owner.js";
import { DEFAULT_OPERATION_RATE } from "../runtime/limits/caller-limits.js";
import { DEFAULT_FAILED_LOOKUP_LIMIT } from "../runtime/limits/failed-lookup-guard.js";
import { positiveInt } from "./options.js";

export interface CallerFlags {
  rateLimit: number | "off";
  rateBurst: number;
  failedLookups: number | "off";
  /** true: one proxy; a number: that many; absent: X-Forwarded-For ignored. */
  trustProxy?: true | number;
  bind: TaskBinding;
  auditArguments?: boolean;
}

/** "off", or a rate in operations per second (fractions allowed: 0.5 is one every 2 s). */
function rateOrOff(value: string): number | "off" {
  if (value === "off") return "off";
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !(n > 0))
    throw new InvalidArgumentError('expected a positive number of operations per second, or "off"');
  return n;
}

function countOrOff(value: string): number | "off" {
  return value === "off" ? "off" : positiveInt(value);
}

/** The flags, in the order `serve --help` lists them. */
export function callerOptions(): Option[] {
  return [
    new Option(
      "--rate-limit <ops/s>",
      'task operations per second per owner (per address without auth), or "off" (else the rate-limit error, HTTP 429)',
    )
      .argParser(rateOrOff)
      .default(DEFAULT_OPERATION_RATE.perSecond),
    new Option("--rate-burst <n>", "task operations one owner may make at once after a quiet spell")
      .argParser(positiveInt)
      .default(DEFAULT_OPERATION_RATE.burst),
    new Option(
      "--failed-lookups <n>",
      'failed task lookups per owner (per address without auth) per minute before a 60 s cool-down (else the rate-limit error, HTTP 429), or "off"',
    )
      .argParser(countOrOff)
      .default(DEFAULT_FAILED_LOOKUP_LIMIT.perOwner),
    new Option(
      "--trust-proxy [hops]",
      "take the client address from X-Forwarded-For, as appended by this many proxies in front (default 1)",
    ).argParser(positiveInt),
    new Option("--bind <what>", "without auth, bind tasks to nobody (owner: any session reaches them by id) or to the creating session")
      .choices(["owner", "session"])
      .default("owner"),
    new Option("--audit-arguments", "log each task's request arguments in its audit line (default: never)"),
  ];
}

/**
 * The task server options the flags ask for. `authFlag` names the auth flag in use (null without
 * authentication): `--bind session` is for deployments without it, so the combination is refused.
 */
export function callerServerOptions(flags: CallerFlags, authFlag: string | null): Partial<TaskServerOptions> {
  if (flags.bind === "session" && authFlag !== null) {
    throw new InvalidArgumentError(
      `--bind session is for deployments without authentication, and ${authFlag} is set: with authentication tasks are bound to the principal`,
    );
  }
  return {
    rateLimit: flags.rateLimit === "off" ? "off" : { perSecond: flags.rateLimit, burst: flags.rateBurst },
    failedLookups: flags.failedLookups === "off" ? "off" : { perOwner: flags.failedLookups },
    bind: flags.bind,
    ...(flags.auditArguments && { auditArguments: true }),
  };
}
