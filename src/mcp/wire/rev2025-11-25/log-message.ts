import type { LogLevel } from "../../logging/log-level.js";

/** The notification that carries one log message (MCP 2025-11-25 server/utilities/logging). */
export function logMessage(
  level: LogLevel,
  data: unknown,
  logger: string | undefined,
): { method: "notifications/message"; params: Record<string, unknown> } {
  return { method: "notifications/message", params: { level, ...(logger !== undefined && { logger }), data } };
}
