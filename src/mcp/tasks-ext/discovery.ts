import type { StatelessHost } from "../era.js";
import { featureCapabilities } from "../features/feature-capabilities.js";
import { describeTool } from "../handlers/tools-list.js";
import { PROTOCOL_VERSION, RESULT_TYPE, TASKS_EXTENSION } from "./wire.js";

/** The other revision this server speaks, through `initialize` sessions on the same endpoint. */
const SESSION_VERSION = "2025-11-25";

/**
 * Both results are CacheableResults (core 2026-07-28): `ttlMs: 0` because tools may be registered
 * until the server starts and the answer costs nothing; `public` because it is the same for
 * every caller.
 */
const CACHE = { ttlMs: 0, cacheScope: "public" } as const;

/**
 * `server/discover` (X-CAP-3): the extension under `capabilities.extensions` when task support is
 * on, and no 2025-11-25 `capabilities.tasks` slot (X-LEG-3, X-CONF-12); resources, prompts and
 * completions once something of theirs is registered.
 */
export function discover({ config, features }: StatelessHost): Record<string, unknown> {
  return {
    resultType: RESULT_TYPE.complete,
    supportedVersions: [PROTOCOL_VERSION, SESSION_VERSION],
    capabilities: {
      // No listChanged nor subscribe: this era's subscriptions/listen serves only task filters.
      ...(features ? featureCapabilities(features, { notifications: false }) : { tools: {} }),
      ...(config.tasks && { extensions: { [TASKS_EXTENSION]: {} } }),
    },
    ...CACHE,
  };
}

/** `tools/list`: no `execution.taskSupport` under 2026-07-28 (X-LEG-6): the server decides (X-CAP-4). */
export function toolsList({ tools }: StatelessHost): Record<string, unknown> {
  return { resultType: RESULT_TYPE.complete, tools: [...tools.values()].map(describeTool), ...CACHE };
}
