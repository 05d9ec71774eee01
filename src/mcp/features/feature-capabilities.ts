import type { FeatureRegistry } from "./feature-registry.js";

/**
 * The capabilities a session declares for what the registry holds when it begins: `resources`,
 * `prompts`, `completions` only once something of theirs is registered, so a tools-only server
 * declares what it did before. `listChanged` (and resources' `subscribe`) only when the session
 * has a stream to carry the notifications (not a cluster node serving one request of a shared
 * session). Capabilities are fixed for a session: a kind registered for the first time after
 * a session began is not announced to it (it never heard of that kind).
 */
export function featureCapabilities(features: FeatureRegistry, options: { notifications: boolean }): Record<string, unknown> {
  const changes = options.notifications ? { listChanged: true } : {};
  return {
    tools: changes,
    ...(features.hasResources && { resources: { ...(options.notifications && { subscribe: true }), ...changes } }),
    ...(features.hasPrompts && { prompts: changes }),
    ...(features.hasCompletions && { completions: {} }),
  };
}
