/**
 * `mcp-tasks/postgres` — tasks in PostgreSQL (also a cluster's lease store) and its LISTEN/NOTIFY
 * event bus, with the options of a cluster (`createTaskServer({ cluster })`: the worker pool and
 * the lease reaper), which runs on this store.
 */
export { postgresStore, type PostgresStore, type PostgresStoreOptions } from "../store/postgres/postgres-store.js";
export { pgEventBus, type PgEventBus, type PgEventBusOptions } from "../events/pg-event-bus.js";
export type { WorkerPoolOptions } from "../runtime/cluster/worker-pool.js";
export type { LeaseReaperOptions } from "../runtime/cluster/lease-reaper.js";
