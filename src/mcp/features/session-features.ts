import { z } from "zod";
import type { FeatureContext } from "./feature-context.js";
import { featureCapabilities } from "./feature-capabilities.js";
import type { FeatureHost } from "./feature-host.js";
import { FEATURE_METHODS, serves } from "./feature-methods.js";
import { paramsOf } from "./feature-params.js";
import type { FeatureRegistry } from "./feature-registry.js";
import { knowsResource } from "./resource-methods.js";
import { resourceNotFound } from "./resources.js";
import type { ResourceSubscriptions, UpdateSink } from "./subscriptions.js";
import type { ListChangedSessions, ListChangedSink } from "./list-changed.js";

/** What a server shares with each of its sessions besides tools: the registry and the subscriptions. */
export interface SessionFeatures {
  registry: FeatureRegistry;
  subscriptions: ResourceSubscriptions;
  /** Where the session is entered to hear of list changes (left when it closes, by the server's owner). */
  listeners: ListChangedSessions;
}

export type SessionFeatureMethod = (params: Record<string, unknown> | undefined, ctx: FeatureContext) => Promise<Record<string, unknown>>;

const UriParams = z.object({ uri: z.string() }).loose();

/**
 * What one session declares and serves besides tools, fixed when it begins: the read-only
 * feature methods whose part of the registry is not empty, and, on a session with a stream for
 * notifications, `resources/subscribe` / `resources/unsubscribe` (a subscription to a URI no
 * resource answers to is -32002, as a read of it would be). Enters the session among the
 * listeners for the lists it declared `listChanged` for.
 */
export function sessionFeatures(
  features: SessionFeatures,
  host: Omit<FeatureHost, "features">,
  sink: UpdateSink & ListChangedSink,
  options: { notifications: boolean },
): { capabilities: Record<string, unknown>; methods: Record<string, SessionFeatureMethod> } {
  const { registry, subscriptions } = features;
  const full: FeatureHost = { ...host, features: registry };
  const methods: Record<string, SessionFeatureMethod> = {};
  for (const [method, { run, needs }] of Object.entries(FEATURE_METHODS)) {
    if (serves(registry, needs)) methods[method] = (params, ctx) => run(full, params, ctx);
  }
  if (registry.hasResources && options.notifications) {
    methods["resources/subscribe"] = async (params) => {
      const { uri } = paramsOf(UriParams, params, "resources/subscribe");
      if (!knowsResource(registry, uri)) throw resourceNotFound(uri);
      subscriptions.subscribe(sink, uri);
      return {};
    };
    methods["resources/unsubscribe"] = async (params) => {
      const { uri } = paramsOf(UriParams, params, "resources/unsubscribe");
      subscriptions.unsubscribe(sink, uri);
      return {};
    };
  }
  const capabilities = featureCapabilities(registry, options);
  features.listeners.add(sink, capabilities);
  return { capabilities, methods };
}
