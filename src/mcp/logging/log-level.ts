/**
 * The level of a `ctx.log()` message, one of MCP logging's (RFC 5424's severities). Spelled out
 * rather than derived from the list of levels, so the API reference shows the levels themselves.
 */
export type LogLevel = "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency";

/**
 * Every {@link LogLevel}, in order of severity (debug lowest, emergency highest). Era-neutral: how
 * a message travels, and how a client sets its threshold, belong to the era folders.
 */
export const LOG_LEVELS = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency",
] as const satisfies readonly LogLevel[];

export function isLogLevel(value: unknown): value is LogLevel {
  return typeof value === "string" && (LOG_LEVELS as readonly string[]).includes(value);
}

/**
 * The level a client asked for on one session: messages below it are not sent. Until it asks,
 * everything is sent (the spec leaves the choice to the server; a tool's own level is its say).
 */
export class LogThreshold {
  private minimum: number = 0;

  set(level: LogLevel): void {
    this.minimum = LOG_LEVELS.indexOf(level);
  }

  /** Whether a message at `level` reaches the client. */
  admits(level: LogLevel): boolean {
    return LOG_LEVELS.indexOf(level) >= this.minimum;
  }
}
