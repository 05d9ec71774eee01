import type { EventBus } from "../events/event-bus.js";
import { localEventBus } from "../events/local-event-bus.js";
import { pgEventBus } from "../events/pg-event-bus.js";
import type { Logger } from "../core/logger.js";
import { openStore } from "../store/open-store.js";
import { tablesOf } from "../store/postgres/sql.js";
import type { TaskStore } from "../store/task-store.js";

/** Where tasks live and how wake-ups travel, chosen together from one `--store` spec. */
export interface Backend {
  store: TaskStore;
  bus: EventBus;
  /** True for a store several processes share (PostgreSQL): cluster mode. */
  shared: boolean;
  /**
   * Resolves once the bus hears other nodes (LISTEN established); at once for the in-process bus.
   * A node announces itself ready only after this, so no wake-up sent to it is lost.
   */
  ready: Promise<void>;
}

/**
 * `memory` and SQLite get the in-process bus; a `postgres://…[?schema=NAME]` store gets the
 * LISTEN/NOTIFY bus on a channel named after the schema, so deployments sharing a database but
 * not a schema do not wake each other.
 */
export function openBackend(spec: string, logger: Logger): Backend {
  const store = openStore(spec, { logger });
  if (!/^postgres(ql)?:\/\//.test(spec)) {
    return { store, bus: localEventBus((err) => logger.error({ err }, "event listener failed")), shared: false, ready: Promise.resolve() };
  }
  const url = new URL(spec);
  const schema = url.searchParams.get("schema") ?? "mcp_tasks";
  url.searchParams.delete("schema");
  const channel = `mcp_tasks_${schema}`
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, "_")
    .slice(0, 63);
  // The store (opened above, with the same schema) created the table; its name is validated there.
  // Same database as the store: its writes may carry the NOTIFYs of creations and outcomes.
  const bus = pgEventBus({
    connectionString: url.toString(),
    channel,
    logger,
    overflowTable: tablesOf(schema).events,
    storeOnSameDatabase: true,
  });
  return { store, bus, shared: true, ready: bus.ready };
}
