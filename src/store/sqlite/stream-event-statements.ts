/** The SSE events of Streamable HTTP streams, for Last-Event-ID resumption. */
import type { SqliteDatabase as Database } from "./driver.js";
import type { StreamEventStore } from "../stream-event-store.js";
import type { GroupCommit } from "./group-commit.js";

/** The group key of stream events: never a task id, so no task lookup flushes for them. */
const STREAM_EVENTS = "\u0000stream-events";

/**
 * Appends go through the task store's group commit: a waiting `tasks/result` stores two events
 * (its stream's priming event and its answer), each its own transaction and file locks before;
 * when many waiters wake at once, the answers they send in that run of promise jobs now share one
 * commit. At the tick, not the end of the turn: the transport writes an event only once stored,
 * and a shutdown gives the answers it releases one turn to reach their streams. Every read
 * flushes the group first, so it sees every event appended before it.
 */
export function sqliteStreamEvents(db: Database, group: GroupCommit): StreamEventStore {
  const insert = db.prepare<[string, string, string, number], { id: number }>(
    `INSERT INTO stream_events (session_key, stream_id, message, created_at) VALUES (?, ?, ?, ?) RETURNING id`,
  );
  const streamOf = db.prepare<[number, string], { stream_id: string }>(
    `SELECT stream_id FROM stream_events WHERE id = ? AND session_key = ?`,
  );
  const after = db.prepare<[string, string, number, number], { id: number; message: string }>(
    `SELECT id, message FROM stream_events WHERE session_key = ? AND stream_id = ? AND id > ? ORDER BY id LIMIT ?`,
  );
  const pruneOld = db.prepare<[number], unknown>(`DELETE FROM stream_events WHERE created_at < ?`);
  // All but the newest `keep` of one stream: the id of the oldest one kept bounds the delete.
  const pruneStream = db.prepare<{ sessionKey: string; streamId: string; keep: number }, unknown>(`
    DELETE FROM stream_events WHERE session_key = @sessionKey AND stream_id = @streamId AND id < (
      SELECT id FROM stream_events WHERE session_key = @sessionKey AND stream_id = @streamId
      ORDER BY id DESC LIMIT 1 OFFSET @keep - 1)`);

  return {
    async append({ sessionKey, streamId, message, now }) {
      return group.run(
        STREAM_EVENTS,
        () => {
          // .all(), not .get(), for a write with RETURNING: .get() hands back the row even when the
          // commit then fails (a full disk), which would give out an event id never stored.
          const [row] = insert.all(sessionKey, streamId, message, now);
          if (row === undefined) throw new Error("stream event insert returned no id");
          return row.id;
        },
        "tick",
      );
    },
    async streamOf(sessionKey, eventId) {
      group.flush();
      return streamOf.get(eventId, sessionKey)?.stream_id ?? null;
    },
    async after(sessionKey, streamId, afterId, limit) {
      group.flush();
      return after.all(sessionKey, streamId, afterId, Math.max(0, Math.floor(limit)));
    },
    async prune(retention) {
      group.flush();
      if ("before" in retention) return pruneOld.run(retention.before).changes;
      const keep = Math.max(1, Math.floor(retention.keep));
      return pruneStream.run({ sessionKey: retention.sessionKey, streamId: retention.streamId, keep }).changes;
    },
  };
}
