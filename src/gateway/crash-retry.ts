import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import { DEFAULT_CRASH_RETRIES, type GatewayConfig } from "./gateway-config.js";

/**
 * How many times a call of `tool` is re-sent when the upstream dies under it (0: the task fails).
 * Only a tool whose recovery is "retry" or "resume" is re-sent at all — a re-sent call may run its
 * side effects twice. A tool's own config entry is the operator's word for it; a recovery that
 * comes from `defaults` only applies to a tool the upstream declares safe to repeat
 * (`idempotentHint` or `readOnlyHint`), so a blanket default never re-sends a non-idempotent call.
 */
export function crashRetries(config: GatewayConfig, tool: { name: string; annotations?: ToolAnnotations | undefined }): number {
  const resolved = config.tool(tool.name);
  if (resolved.recovery !== "retry" && resolved.recovery !== "resume") return 0;
  if (!config.hasOwnEntry(tool.name, "recovery") && tool.annotations?.idempotentHint !== true && tool.annotations?.readOnlyHint !== true)
    return 0;
  return resolved.retries ?? DEFAULT_CRASH_RETRIES;
}
