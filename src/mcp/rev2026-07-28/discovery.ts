import type { StatelessHost } from "../era.js";
import { featureCapabilities } from "../features/feature-capabilities.js";
import { describeTool, withPause } from "../handlers/tools-list.js";
import type { Envelope } from "../wire/rev2026-07-28/envelope.js";
import { usesFallback } from "../fallback/fallback-client.js";
import { taskToolsBeside } from "../fallback/task-tools.js";
import { OWN_META, PROTOCOL_VERSION, RESULT_TYPE, TASKS_EXTENSION } from "../wire/rev2026-07-28/wire.js";
import type { RegisteredTool } from "../tool-definition.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

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
  // No listChanged nor subscribe: this era's subscriptions/listen serves only task filters.
  const base: Record<string, unknown> = features ? featureCapabilities(features, { notifications: false }) : { tools: {} };
  return {
    resultType: RESULT_TYPE.complete,
    supportedVersions: [PROTOCOL_VERSION, SESSION_VERSION],
    capabilities: {
      ...base,
      // SEP-3182: tools/call honours params.idempotencyKey (docs/idempotency.md).
      ...(config.tasks && { tools: { ...(base["tools"] as Record<string, unknown>), idempotency: {} } }),
      ...(config.tasks && { extensions: { [TASKS_EXTENSION]: {} } }),
    },
    ...CACHE,
  };
}

/**
 * `tools/list`: no `execution.taskSupport` under 2026-07-28 (X-LEG-6): the server decides (X-CAP-4),
 * and says how in our own `_meta` key (OWN_META.taskSupport) when task support is on.
 * A request without the extension also lists the fallback's `task_*` tools (docs/hosts/README.md); the answer then depends on the envelope, so its cache scope is the caller's.
 */
export function toolsList({ tools, config, engine }: StatelessHost, envelope: Envelope): Record<string, unknown> {
  const listed = [...tools.values()].map((tool) => withTaskSupport(tool, config.tasks, engine.isPaused(tool.name)));
  if (!usesFallback(config, envelope.declaresTasks)) return { resultType: RESULT_TYPE.complete, tools: listed, ...CACHE };
  return { resultType: RESULT_TYPE.complete, tools: [...listed, ...taskToolsBeside(tools)], ...CACHE, cacheScope: "private" };
}

/** A tool as listed here: how a call of it is decided in `_meta` (OWN_META), beside the tool's own `_meta`. */
function withTaskSupport(tool: RegisteredTool, tasks: boolean, paused: boolean): Tool {
  const described = withPause(describeTool(tool), paused);
  if (!tasks) return described;
  return { ...described, _meta: { ...described._meta, [OWN_META.taskSupport]: tool.definition.taskSupport ?? "forbidden" } };
}
