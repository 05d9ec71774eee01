import type { StatelessRequestorDescriptor } from "../requestor-era.js";
import { discover } from "./discover.js";
import { REV_2026_07_28_FEATURES, TasksExtRequestor } from "./requestor.js";
import { StatelessConnection } from "./stateless-connection.js";

/**
 * The 2026-07-28 requestor with the tasks extension, as the registry (`requestor-era-registry.ts`)
 * lists it. Its connection is reached through `TaskClient.connect`, not by name: the package's
 * `mcp-tasks/client` entry exports era-neutral names only.
 * @internal
 */
export const REQUESTOR_2026_07_28 = {
  kind: "stateless",
  revision: "2026-07-28" as const,
  features: REV_2026_07_28_FEATURES,
  connect: (url, options) => new StatelessConnection(url, options),
  owns: (connection): connection is StatelessConnection => connection instanceof StatelessConnection,
  requestor: (connection, handlers) => new TasksExtRequestor(connection, handlers),
  // A server that refuses server/discover (2025-only) speaks another era.
  speaks: async (connection, signal) => (await discover(connection, signal)) !== null,
} satisfies StatelessRequestorDescriptor<StatelessConnection>;
