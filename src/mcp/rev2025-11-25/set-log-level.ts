import { TaskError } from "../../core/errors.js";
import { isLogLevel, type LogThreshold } from "../logging/log-level.js";
import type { LooseParams } from "../request-schemas.js";

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
