/**
 * Which endpoints hear a task's events, decided once, when the task is created: a pure function
 * of the configuration, the task's owner and the URL its creation asked for. The answer is kept
 * in the task's origin (`TaskOrigin.webhooks`); each store turns it into outbox rows inside the
 * very write that moves the task (an `input_required`, `completed`, `failed` or `cancelled`
 * transition), so no path that changes a status — a handler's outcome, a cancel, the sweeper,
 * the cluster's lease reaper — can change it without its events.
 */
import type { WebhookRoute } from "../../core/task.js";
import type { DeliveryRules, WebhookSettings } from "./webhook-config.js";

/** A per-task webhook a creation asked for, already checked against the allow-list ({@link checkRequestedWebhook}). */
export interface RequestedWebhook {
  url: string;
  /** The id of the prefix that allowed it. */
  via: string;
}

/** Why a requested per-task webhook is refused (the binding answers -32602 with the message). */
export class WebhookRefusal extends Error {
  override readonly name = "WebhookRefusal";
}

/**
 * Checks what a creation's `_meta` asked for (a URL string, or `{ url }`) against the operator's
 * per-task allow-list of URL prefixes: the longest matching prefix wins. Plain data in, plain data out.
 * @throws WebhookRefusal naming the reason
 */
export function checkRequestedWebhook(settings: WebhookSettings | null, requested: unknown): RequestedWebhook {
  const raw =
    typeof requested === "object" && requested !== null && !Array.isArray(requested) ? (requested as { url?: unknown }).url : requested;
  if (typeof raw !== "string") throw new WebhookRefusal("the webhook must be a URL string or an object with a url");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookRefusal("the webhook is not a valid URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new WebhookRefusal("the webhook URL must be http or https");
  if (url.username !== "" || url.password !== "") throw new WebhookRefusal("the webhook URL must not carry credentials");
  if (settings === null || settings.perTask.length === 0) throw new WebhookRefusal("this server accepts no per-task webhooks");
  const normal = url.href;
  const match = settings.perTask
    .filter((prefix) => normal.startsWith(new URL(prefix.prefix).href))
    .sort((a, b) => b.prefix.length - a.prefix.length)[0];
  if (match === undefined) throw new WebhookRefusal("the webhook URL is not under a prefix the operator allows");
  return { url: normal, via: match.id };
}

/** The routes of a new task of `owner`: every endpoint subscribed for it, and the per-task URL. */
export function routeWebhooks(settings: WebhookSettings, owner: string | null, requested?: RequestedWebhook): WebhookRoute[] {
  const routes: WebhookRoute[] = settings.endpoints
    .filter((endpoint) => endpoint.principals === "all" || (owner !== null && endpoint.principals.includes(owner)))
    .map((endpoint) => ({ url: endpoint.url, endpoint: endpoint.id, events: [...endpoint.events] }));
  if (requested !== undefined) {
    const prefix = settings.perTask.find((candidate) => candidate.id === requested.via);
    if (prefix !== undefined) routes.push({ url: requested.url, endpoint: prefix.id, events: [...prefix.events] });
  }
  return routes;
}

/** The delivery rules for an outbox row's endpoint id, or null when the configuration no longer has it. */
export function rulesOf(settings: WebhookSettings, endpointId: string): (DeliveryRules & { includeOwner: boolean }) | null {
  const endpoint = settings.endpoints.find((candidate) => candidate.id === endpointId);
  if (endpoint !== undefined) return { ...endpoint, includeOwner: endpoint.principals === "all" };
  const prefix = settings.perTask.find((candidate) => candidate.id === endpointId);
  return prefix === undefined ? null : { ...prefix, includeOwner: false };
}
