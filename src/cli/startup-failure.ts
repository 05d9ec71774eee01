import { connectionCause, systemCode } from "../mcp/connection-cause.js";

/** Exit code of a serving command that could not start (as an unhandled failure: 1). */
const STARTUP_FAILED = 1;

/** System codes of a database that cannot be reached (refused, unknown host, no route, timed out, reset). */
const UNREACHABLE = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ECONNRESET"]);

/**
 * A serving command that could not start for a reason the person fixes with a flag: one line
 * naming the flag, then exit 1 — a port in use (`--port`), a PostgreSQL `--store` that cannot be
 * reached. Anything else is left to the caller.
 */
export function exitIfStartupRefused(error: unknown, opts: { port: number; host: string; store: string; stdio?: boolean }): void {
  const code = systemCode(error);
  if (code === "EADDRINUSE" && !opts.stdio) {
    process.stderr.write(
      `mcp-tasks: cannot listen on ${opts.host}:${opts.port}: the port is in use (another server?); choose another with --port (0 picks a free one)\n`,
    );
    process.exit(STARTUP_FAILED);
  }
  if (/^postgres(ql)?:\/\//.test(opts.store) && code !== undefined && UNREACHABLE.has(code)) {
    const shown = withoutPassword(opts.store);
    process.stderr.write(
      `mcp-tasks: cannot reach the PostgreSQL store ${shown}: ${connectionCause(shown, error)}; check --store (host, port, database) or start PostgreSQL\n`,
    );
    process.exit(STARTUP_FAILED);
  }
}

function withoutPassword(spec: string): string {
  try {
    const url = new URL(spec);
    if (url.password) url.password = "***";
    return url.toString();
  } catch {
    return spec;
  }
}
