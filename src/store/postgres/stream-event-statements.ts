/** The SSE events of Streamable HTTP streams, for Last-Event-ID resumption on any node. */
import type pg from "pg";
import type { StreamEventStore } from "../stream-event-store.js";
import { statement, type Statement, type Tables } from "./sql.js";

export interface StreamEventStatements {
  /** ($1 sessionKey, $2 streamId, $3 message, $4 createdAt) → id */
  insert: Statement;
  /** ($1 id, $2 sessionKey) → stream_id */
  streamOf: Statement;
  /** ($1 sessionKey, $2 streamId, $3 afterId, $4 limit) → id, message */
  after: Statement;
  /** ($1 before) */
  pruneOld: Statement;
  /** ($1 sessionKey, $2 streamId, $3 keep): all but the newest `keep` of the stream. */
  pruneStream: Statement;
}

export function streamEventStatements(t: Tables): StreamEventStatements {
  return {
    insert: statement(
      "stream_event_insert",
      `INSERT INTO ${t.streamEvents} (session_key, stream_id, message, created_at) VALUES ($1, $2, $3, $4) RETURNING id`,
    ),
    streamOf: statement("stream_event_stream", `SELECT stream_id FROM ${t.streamEvents} WHERE id = $1 AND session_key = $2`),
    after: statement(
      "stream_events_after",
      `SELECT id, message FROM ${t.streamEvents} WHERE session_key = $1 AND stream_id = $2 AND id > $3 ORDER BY id LIMIT $4`,
    ),
    pruneOld: statement("stream_events_prune_old", `DELETE FROM ${t.streamEvents} WHERE created_at < $1`),
    pruneStream: statement(
      "stream_events_prune_stream",
      `DELETE FROM ${t.streamEvents} WHERE session_key = $1 AND stream_id = $2 AND id < (
         SELECT id FROM ${t.streamEvents} WHERE session_key = $1 AND stream_id = $2
         ORDER BY id DESC LIMIT 1 OFFSET $3::int - 1)`,
    ),
  };
}

/** The store's {@link StreamEventStore}, running its statements through `run` (which migrates first). */
export function postgresStreamEvents(
  t: Tables,
  run: <R extends pg.QueryResultRow>(query: Statement, values: unknown[]) => Promise<pg.QueryResult<R>>,
): StreamEventStore {
  const sql = streamEventStatements(t);
  return {
    async append({ sessionKey, streamId, message, now }) {
      const id = (await run<{ id: number }>(sql.insert, [sessionKey, streamId, message, now])).rows[0]?.id;
      if (id === undefined) throw new Error("stream event insert returned no id");
      return Number(id);
    },
    async streamOf(sessionKey, eventId) {
      if (!Number.isSafeInteger(eventId) || eventId <= 0) return null;
      return (await run<{ stream_id: string }>(sql.streamOf, [eventId, sessionKey])).rows[0]?.stream_id ?? null;
    },
    async after(sessionKey, streamId, afterId, limit) {
      const rows = (await run<{ id: number; message: string }>(sql.after, [sessionKey, streamId, afterId, Math.max(0, Math.floor(limit))]))
        .rows;
      return rows.map((row) => ({ id: Number(row.id), message: row.message }));
    },
    async prune(retention) {
      if ("before" in retention) return (await run(sql.pruneOld, [retention.before])).rowCount ?? 0;
      const keep = Math.max(1, Math.floor(retention.keep));
      return (await run(sql.pruneStream, [retention.sessionKey, retention.streamId, keep])).rowCount ?? 0;
    },
  };
}
