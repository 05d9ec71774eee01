/**
 * A notification a cluster store sends from the statement of a write (PostgreSQL: `pg_notify` in
 * it), so other nodes hear of the write the moment it commits, and never of one that failed its
 * compare-and-set — without a statement, a round trip and a commit of its own. The payload is
 * opaque to the store: the event bus made it. Here, in core, because the store takes it and the
 * bus makes it, and neither knows the other.
 */
export interface StoreNotify {
  channel: string;
  payload: string;
}
