/**
 * Log levels of MCP logging, in the order of RFC 5424's severities (debug lowest, emergency
 * highest). Era-neutral: how a message travels, and how a client sets its threshold, belong to
 * the era folders.
 */
export const LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"] as const;

export type LogLevel = (typeof LOG_LEVELS)[number];

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
