/**
 * The per-task webhook a creation may ask for, in both eras. Each era reads the raw value from its
 * own request shape (`wire/webhook-meta.ts`); this checks it against the operator's allow-list and
 * hands the era-neutral creation path only the parsed value.
 */
import { TaskError } from "../core/errors.js";
import { checkRequestedWebhook, WebhookRefusal, type RequestedWebhook } from "../runtime/webhooks/webhook-routing.js";
import type { WebhookSettings } from "../runtime/webhooks/webhook-config.js";
import { WEBHOOK_META_KEY } from "./wire/webhook-meta.js";

export { WEBHOOK_META_KEY, webhookMetaOf } from "./wire/webhook-meta.js";

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
