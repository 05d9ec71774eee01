import type { LooseParams } from "../request-schemas.js";

/**
 * The per-task webhook a creation may ask for, in both eras: a vendor-prefixed `_meta` key of the
 * creating `tools/call` (an extension of this server, not of MCP; docs/webhooks.md).
 */
export const WEBHOOK_META_KEY = "dev.mcp-tasks/webhook";

/** The raw value under {@link WEBHOOK_META_KEY} in a request's `params._meta`, undefined when absent. */
export function webhookMetaOf(params: LooseParams): unknown {
  const meta = params?.["_meta"];
  return typeof meta === "object" && meta !== null && !Array.isArray(meta)
    ? (meta as Record<string, unknown>)[WEBHOOK_META_KEY]
    : undefined;
}
