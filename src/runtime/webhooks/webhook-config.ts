/**
 * The operator's webhook configuration (docs/webhooks.md): endpoints that receive the events of
 * every task or of some principals' tasks, and the URL prefixes a requestor may name for one task.
 * One zod schema checks the `--webhooks` file and `createTaskServer({ webhooks })` alike, and
 * resolves secrets named by environment variable; errors say where and what, never a secret.
 */
import { z } from "zod";
import { isAddressOrCidr } from "../outbound/address-policy.js";
import { secretKey } from "./signature.js";
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from "./webhook-event.js";

/** The default retry window: a delivery that keeps failing is dead-lettered 24 h after its event. */
export const DEFAULT_RETRY_WINDOW_MS = 24 * 3600_000;
/** The default size limit of a result carried in an event. */
export const DEFAULT_MAX_RESULT_BYTES = 64 * 1024;

const httpUrl = z.string().refine((value) => {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.username === "" && url.password === "";
  } catch {
    return false;
  }
}, "must be an http(s) URL without credentials");

const addressList = z.array(z.string().refine(isAddressOrCidr, "must be an IP address or CIDR")).default([]);
const events = z
  .array(z.enum(WEBHOOK_EVENT_TYPES))
  .min(1)
  .default([...WEBHOOK_EVENT_TYPES]);

/** What an endpoint and a prefix share: the secret (or the variable holding it), events, result, private addresses. */
const delivery = {
  secret: z.string().optional(),
  secretEnv: z.string().optional(),
  events,
  includeResult: z.boolean().default(false),
  maxResultBytes: z.number().int().positive().default(DEFAULT_MAX_RESULT_BYTES),
  allowPrivate: addressList,
};

const endpointSchema = z.strictObject({
  id: z.string().min(1).optional(),
  url: httpUrl,
  principals: z.union([z.literal("all"), z.array(z.string()).min(1)]).default("all"),
  ...delivery,
});

const prefixSchema = z.strictObject({
  id: z.string().min(1).optional(),
  prefix: httpUrl,
  ...delivery,
});

const positiveMs = z.number().int().positive();

export const webhooksSchema = z.strictObject({
  endpoints: z.array(endpointSchema).default([]),
  /** URL prefixes a requestor may name in a task's `_meta` (the per-task allow-list). */
  perTask: z.array(prefixSchema).default([]),
  retryWindowMs: positiveMs.default(DEFAULT_RETRY_WINDOW_MS),
  connectTimeoutMs: positiveMs.default(5000),
  responseTimeoutMs: positiveMs.default(10_000),
  maxResponseBytes: positiveMs.default(4096),
  /**
   * Deliveries in flight at once to one URL, per process (a slow receiver holds only its own).
   * A process's rate to one URL is at most this many per receiver round trip: 16 keeps up with
   * hundreds of events a second to a receiver tens of milliseconds away.
   */
  concurrencyPerEndpoint: positiveMs.default(16),
  /** How often due deliveries are looked for when nothing wakes the sender sooner. */
  pollIntervalMs: positiveMs.default(1000),
  /** The wait before the first retry; each next one waits twice as long (with jitter), up to maxRetryDelayMs. */
  firstRetryDelayMs: positiveMs.default(1000),
  maxRetryDelayMs: positiveMs.default(3600_000),
});

/** What `createTaskServer({ webhooks })` and the `--webhooks` file take. */
export type WebhooksInput = z.input<typeof webhooksSchema>;

/** What every delivery to one endpoint (or per-task URL under one prefix) is made with. */
export interface DeliveryRules {
  /** Names the endpoint or prefix in the outbox, the metrics and the web view (never the secret). */
  id: string;
  /** The `whsec_…` secret. */
  secret: string;
  events: readonly WebhookEventType[];
  includeResult: boolean;
  maxResultBytes: number;
  allowPrivate: readonly string[];
}

export interface WebhookEndpoint extends DeliveryRules {
  url: string;
  principals: "all" | readonly string[];
}

export interface WebhookPrefix extends DeliveryRules {
  prefix: string;
}

/** The checked configuration. */
export interface WebhookSettings {
  endpoints: readonly WebhookEndpoint[];
  perTask: readonly WebhookPrefix[];
  retryWindowMs: number;
  connectTimeoutMs: number;
  responseTimeoutMs: number;
  maxResponseBytes: number;
  concurrencyPerEndpoint: number;
  pollIntervalMs: number;
  firstRetryDelayMs: number;
  maxRetryDelayMs: number;
}

/** A configuration error: `where` is the path in the configuration ("endpoints.0.secret"). */
export class WebhookConfigError extends Error {
  override readonly name = "WebhookConfigError";
}

function resolveSecret(
  where: string,
  given: { secret?: string | undefined; secretEnv?: string | undefined },
  env: NodeJS.ProcessEnv,
): string {
  if (given.secret !== undefined && given.secretEnv !== undefined)
    throw new WebhookConfigError(`${where}: give secret or secretEnv, not both`);
  let secret = given.secret;
  if (given.secretEnv !== undefined) {
    secret = env[given.secretEnv];
    if (secret === undefined || secret === "")
      throw new WebhookConfigError(`${where}.secretEnv: the variable ${given.secretEnv} is not set`);
  }
  if (secret === undefined) throw new WebhookConfigError(`${where}: a secret (whsec_…) or secretEnv is required`);
  try {
    secretKey(secret);
  } catch (error) {
    throw new WebhookConfigError(`${where}.${given.secretEnv === undefined ? "secret" : "secretEnv"}: ${(error as Error).message}`);
  }
  return secret;
}

/**
 * Checks a webhook configuration and resolves its secrets from `env`.
 * @throws WebhookConfigError naming the first problem's place ("endpoints.0.url: must be …").
 */
export function parseWebhooks(input: unknown, env: NodeJS.ProcessEnv = process.env): WebhookSettings {
  const parsed = webhooksSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.map(String).join(".") || "(root)";
    throw new WebhookConfigError(`${where}: ${issue?.message ?? "invalid"}`);
  }
  const config = parsed.data;
  const ids = new Set<string>();
  const idOf = (given: string | undefined, fallback: string, where: string): string => {
    const id = given ?? fallback;
    if (ids.has(id)) throw new WebhookConfigError(`${where}.id: "${id}" names two endpoints or prefixes`);
    ids.add(id);
    return id;
  };
  const endpoints = config.endpoints.map((endpoint, index): WebhookEndpoint => {
    const where = `endpoints.${index}`;
    return {
      id: idOf(endpoint.id, `endpoint-${index + 1}`, where),
      url: endpoint.url,
      principals: endpoint.principals,
      secret: resolveSecret(where, endpoint, env),
      events: endpoint.events,
      includeResult: endpoint.includeResult,
      maxResultBytes: endpoint.maxResultBytes,
      allowPrivate: endpoint.allowPrivate,
    };
  });
  const perTask = config.perTask.map((prefix, index): WebhookPrefix => {
    const where = `perTask.${index}`;
    return {
      id: idOf(prefix.id, `prefix-${index + 1}`, where),
      prefix: prefix.prefix,
      secret: resolveSecret(where, prefix, env),
      events: prefix.events,
      includeResult: prefix.includeResult,
      maxResultBytes: prefix.maxResultBytes,
      allowPrivate: prefix.allowPrivate,
    };
  });
  return {
    endpoints,
    perTask,
    retryWindowMs: config.retryWindowMs,
    connectTimeoutMs: config.connectTimeoutMs,
    responseTimeoutMs: config.responseTimeoutMs,
    maxResponseBytes: config.maxResponseBytes,
    concurrencyPerEndpoint: config.concurrencyPerEndpoint,
    pollIntervalMs: config.pollIntervalMs,
    firstRetryDelayMs: config.firstRetryDelayMs,
    maxRetryDelayMs: config.maxRetryDelayMs,
  };
}

/** The configuration of `--webhook URL`: every task's events to one URL, signed with `MCP_TASKS_WEBHOOK_SECRET`. */
export function singleWebhook(url: string, allowPrivate: readonly string[] = []): WebhooksInput {
  return { endpoints: [{ id: "default", url, secretEnv: "MCP_TASKS_WEBHOOK_SECRET", allowPrivate: [...allowPrivate] }] };
}
