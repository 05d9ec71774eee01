/**
 * The events of Streamable HTTP's SSE streams, kept for resumption (the transport's
 * "Resumability and Redelivery"): each message written on a stream is stored under an id that
 * increases with every write across the store, so a client that reconnects with `Last-Event-ID`
 * gets what came after it. Kept in the task store's database, so a stream can be resumed on
 * another node of a cluster, and after a restart where the session survives one.
 *
 * Streams are named by the session they belong to (`sessionKey`, a digest of the session id: a
 * shared session's id is a long signed token) and the stream's id within it. A lookup always
 * names the session: an event id of another session is never found.
 */
export interface StreamEventStore {
  /** Stores one event (`message`: JSON text, `{}` for a priming event); returns its id (> 0). */
  append(event: { sessionKey: string; streamId: string; message: string; now: number }): Promise<number>;
  /** The stream an event of this session belongs to, or null (unknown, pruned, another session's). */
  streamOf(sessionKey: string, eventId: number): Promise<string | null>;
  /** Events of the stream after `afterId`, oldest first, at most `limit`. */
  after(sessionKey: string, streamId: string, afterId: number, limit: number): Promise<StoredStreamEvent[]>;
  /** Deletes events stored before `before` (ms), and all but the newest `keep` of this one stream. */
  prune(retention: { before: number } | { sessionKey: string; streamId: string; keep: number }): Promise<number>;
}

/** One stored SSE event: its id (the `Last-Event-ID` a client resumes from) and its JSON text. */
export interface StoredStreamEvent {
  id: number;
  message: string;
}

/** Default of the age bound: an event older than this can no longer be replayed. */
export const DEFAULT_STREAM_EVENT_MAX_AGE_MS = 60 * 60 * 1000;
/** Default of the per-stream bound: a stream keeps at most this many of its newest events. */
export const DEFAULT_STREAM_EVENTS_PER_STREAM = 1000;
