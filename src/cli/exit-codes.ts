import { TaskError } from "../core/errors.js";
import { authenticationErrorIn } from "./connection-failure.js";
import { ConnectionError, InputRefusedError, RemoteError, TaskCancelledError } from "../mcp/requestor/requestor-errors.js";

/** Exit codes of `mcp-tasks call` and `mcp-tasks tasks …` (documented in docs/cli.md); `serve` uses Usage for its usage errors. */
export const ExitCode = {
  /** The call or task completed; or the tasks command did what it was asked. */
  Ok: 0,
  /** The tool reported failure (isError) or the request ended in a JSON-RPC error; or the server refused the request. */
  Failed: 1,
  /** Bad command line: unknown option, bad JSON arguments, a task wish the server or tool does not allow. */
  Usage: 2,
  /** The task was cancelled (or the plain call was interrupted). */
  Cancelled: 3,
  /** No usable connection: unreachable target, closed connection, malformed answers. */
  Connection: 4,
  /** Ctrl-C → "detach": the task goes on; its id was printed. */
  Detached: 5,
  /** The server refused the credentials (HTTP 401/403): no token, a bad one, or one without the rights. */
  Authentication: 6,
} as const;

/** The exit code for an error that ended a command. */
export function exitCodeOf(error: unknown): number {
  if (error instanceof TaskCancelledError) return ExitCode.Cancelled;
  // A refused input request ends the command as the task's failure would where the era can send
  // the refusal (2025-11-25): the same exit code in both eras.
  if (error instanceof RemoteError || error instanceof InputRefusedError) return ExitCode.Failed;
  // A cancel of a task that had already ended, as 2025-11-25 refuses it and 2026-07-28 reads it.
  if (error instanceof TaskError && error.kind === "terminal") return ExitCode.Failed;
  if (authenticationErrorIn(error)) return ExitCode.Authentication;
  if (error instanceof ConnectionError) return ExitCode.Connection;
  // Refused locally before anything was sent (T-TOOL negotiation, bad input): a usage problem.
  if (error instanceof TaskError && (error.kind === "method_not_found" || error.kind === "invalid_params")) return ExitCode.Usage;
  return ExitCode.Connection;
}
