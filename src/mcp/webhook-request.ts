/**
 * The per-task webhook a creation may ask for, in both eras: a vendor-prefixed `_meta` key of the
 * creating `tools/call` (an extension of this server, not of MCP; docs/webhooks.md). Each era
 * reads the raw value from its own request shape; this checks it against the operator's
 * allow-list and hands the era-neutral creation path only the parsed value.
 */
import { TaskError } from "../core/errors.js";
import { checkRequestedWebhook, WebhookRefusal, type RequestedWebhook } from "../runtime/webhooks/webhook-routing.js";
import type { WebhookSettings } from "../runtime/webhooks/webhook-config.js";
import type { LooseParams } from "./request-schemas.js";

/** The `_meta` key naming a task's webhook URL (a string, or `{ "url": … }`). */
export const WEBHOOK_META_KEY = "dev.mcp-tasks/webhook";

/** The raw value under {@link WEBHOOK_META_KEY} in a request's `params._meta`, undefined when absent. */
export function webhookMetaOf(params: LooseParams): unknown {
  const meta = params?.["_meta"];
  return typeof meta === "object" && meta !== null && !Array.isArray(meta)
    ? (meta as Record<string, unknown>)[WEBHOOK_META_KEY]
    : undefined;
}

/**
 * The checked per-task webhook of a creation, or undefined when it asked for none.
 * @throws TaskError -32602 naming why the URL is refused
 */
export function requestedWebhook(settings: WebhookSettings | null, raw: unknown): RequestedWebhook | undefined {
  if (raw === undefined) return undefined;
  try {
    return checkRequestedWebhook(settings, raw);
  } catch (error) {
    if (error instanceof WebhookRefusal) throw TaskError.invalidParams(`Invalid params: _meta["${WEBHOOK_META_KEY}"]: ${error.message}`);
    throw error;
  }
}
