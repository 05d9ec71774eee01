import { TaskError } from "../../core/errors.js";
import { isLogLevel, type LogLevel, type LogThreshold } from "../logging/log-level.js";
import type { LooseParams } from "../request-schemas.js";

/** The notification that carries one log message (MCP 2025-11-25 server/utilities/logging). */
export function logMessage(
  level: LogLevel,
  data: unknown,
  logger: string | undefined,
): { method: "notifications/message"; params: Record<string, unknown> } {
  return { method: "notifications/message", params: { level, ...(logger !== undefined && { logger }), data } };
}

/**
 * `logging/setLevel`: from now on this session hears messages at `level` and above (RFC 5424
 * order). An unknown level is the requestor's error, -32602 (the logging page's "Invalid log
 * level" error).
 */
export function setLevel(threshold: LogThreshold, params: LooseParams): Record<string, never> {
  const level = params?.["level"];
  if (!isLogLevel(level))
    throw TaskError.invalidParams(`Invalid params: level must be one of debug, info, notice, warning, error, critical, alert, emergency`);
  threshold.set(level);
  return {};
}
