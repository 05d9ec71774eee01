/** `mcp-tasks/postgres` — tasks in PostgreSQL (also a cluster's lease store) and its LISTEN/NOTIFY event bus. */
export { postgresStore, type PostgresStore, type PostgresStoreOptions } from "../store/postgres/postgres-store.js";
export { pgEventBus, type PgEventBus, type PgEventBusOptions } from "../events/pg-event-bus.js";
