/**
 * A tools/call answer that is a tool result with `isError: true` failed as `tool_error` (the MCP
 * conventions' value): on the server's span and on the requestor's alike.
 */
export function toolCallOutcome(value: unknown): { errorType: string } | undefined {
  return typeof value === "object" && value !== null && (value as { isError?: unknown }).isError === true
    ? { errorType: "tool_error" }
    : undefined;
}
