import { TaskError } from "../../core/errors.js";
import type { StatelessHost, StatelessHttpRequest } from "../era.js";
import { FEATURE_METHODS, serves } from "../features/feature-methods.js";
import type { LooseParams } from "../request-schemas.js";
import { RESULT_TYPE } from "../wire/rev2026-07-28/wire.js";

type Method = (
  host: StatelessHost,
  params: LooseParams,
  envelope: unknown,
  request: StatelessHttpRequest,
) => Promise<Record<string, unknown>>;

/**
 * CacheableResult hints (core 2026-07-28) for the lists and `resources/read`: `ttlMs: 0` because
 * registrations change at run time and a read handler's answer may change at any moment;
 * `private` because list callbacks and read handlers see the caller.
 */
const CACHE = { ttlMs: 0, cacheScope: "private" } as const;
const CACHEABLE = new Set(["resources/list", "resources/templates/list", "resources/read", "prompts/list"]);

/**
 * The read-only feature methods (resources, templates, prompts, completions) as 2026-07-28
 * stateless methods: the same handlers as a session's, each result with `resultType: "complete"`
 * (X-CAP-9). A method whose part of the registry is empty is not served (-32601), as its
 * capability is not declared. Subscriptions are session state: `resources/subscribe` is no method
 * of this era (its `subscriptions/listen` filter for resources is not served either).
 */
export const FEATURE_CORE: Readonly<Record<string, Method>> = Object.fromEntries(
  Object.entries(FEATURE_METHODS).map(([method, { run, needs }]): [string, Method] => [
    method,
    async (host, params, _envelope, request) => {
      const { features } = host;
      if (!features || !serves(features, needs)) throw new TaskError("method_not_found", `Method not found: ${method}`);
      const result = await run({ features, store: host.engine.inspect, pageSize: host.config.pageSize }, params, {
        signal: request.signal,
        caller: request.caller,
      });
      return { resultType: RESULT_TYPE.complete, ...result, ...(CACHEABLE.has(method) && CACHE) };
    },
  ]),
);
