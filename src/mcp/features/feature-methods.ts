import { completionComplete } from "./completions.js";
import type { FeatureRegistry } from "./feature-registry.js";
import type { FeatureMethod } from "./feature-host.js";
import { promptsGet, promptsList } from "./prompt-methods.js";
import { resourcesList, resourcesRead, resourceTemplatesList } from "./resource-methods.js";

/** Which part of the registry a method needs; without it the method is not served (-32601). */
type Needs = "resources" | "prompts" | "completions";

/**
 * The read-only feature methods, the same in both eras (2025-11-25 sessions install them on their
 * SDK server; 2026-07-28 stateless requests reach them through the era's method table).
 */
export const FEATURE_METHODS: Readonly<Record<string, { run: FeatureMethod; needs: Needs }>> = {
  "resources/list": { run: resourcesList, needs: "resources" },
  "resources/templates/list": { run: resourceTemplatesList, needs: "resources" },
  "resources/read": { run: resourcesRead, needs: "resources" },
  "prompts/list": { run: promptsList, needs: "prompts" },
  "prompts/get": { run: promptsGet, needs: "prompts" },
  "completion/complete": { run: completionComplete, needs: "completions" },
};

/** Whether the registry has what a feature method needs, so that its capability is declared. */
export function serves(features: FeatureRegistry, needs: Needs): boolean {
  switch (needs) {
    case "resources":
      return features.hasResources;
    case "prompts":
      return features.hasPrompts;
    case "completions":
      return features.hasCompletions;
  }
}
