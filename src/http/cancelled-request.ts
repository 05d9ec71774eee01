import type { RequestId } from "@modelcontextprotocol/sdk/types.js";

/** The request a `notifications/cancelled` names, or undefined for any other message. */
export function cancelledRequestIdOf(message: unknown): RequestId | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const m = message as Record<string, unknown>;
  if (m["jsonrpc"] !== "2.0" || m["method"] !== "notifications/cancelled" || "id" in m) return undefined;
  const params = m["params"] as Record<string, unknown> | undefined;
  const id = params?.["requestId"];
  return typeof id === "string" || typeof id === "number" ? id : undefined;
}

/** The reason a `notifications/cancelled` gives, or a default. */
export function cancelReasonOf(message: unknown): string {
  const reason = (message as { params?: { reason?: unknown } }).params?.reason;
  return typeof reason === "string" ? reason : "withdrawn by the requestor";
}
