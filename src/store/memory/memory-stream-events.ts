import type { StoredStreamEvent, StreamEventStore } from "../stream-event-store.js";

interface Entry extends StoredStreamEvent {
  at: number;
}

/** {@link StreamEventStore} in this process's memory: resumption on this node, until it stops. */
export function memoryStreamEvents(): StreamEventStore {
  let last = 0;
  /** Streams by `sessionKey NUL streamId`, each oldest event first. */
  const streams = new Map<string, Entry[]>();
  const owners = new Map<number, string>();
  const keyOf = (sessionKey: string, streamId: string): string => `${sessionKey}\u0000${streamId}`;

  return {
    async append({ sessionKey, streamId, message, now }) {
      const id = ++last;
      const key = keyOf(sessionKey, streamId);
      let events = streams.get(key);
      if (!events) streams.set(key, (events = []));
      events.push({ id, message, at: now });
      owners.set(id, key);
      return id;
    },

    async streamOf(sessionKey, eventId) {
      const key = owners.get(eventId);
      if (key === undefined || !key.startsWith(`${sessionKey}\u0000`)) return null;
      return key.slice(sessionKey.length + 1);
    },

    async after(sessionKey, streamId, afterId, limit) {
      const events = streams.get(keyOf(sessionKey, streamId)) ?? [];
      return events
        .filter((event) => event.id > afterId)
        .slice(0, Math.max(0, limit))
        .map(({ id, message }) => ({ id, message }));
    },

    async prune(retention) {
      let removed = 0;
      const drop = (key: string, events: Entry[], count: number): void => {
        for (const event of events.splice(0, count)) owners.delete(event.id);
        removed += count;
        if (events.length === 0) streams.delete(key);
      };
      if ("before" in retention) {
        for (const [key, events] of [...streams]) {
          const old = events.findIndex((event) => event.at >= retention.before);
          drop(key, events, old === -1 ? events.length : old);
        }
      } else {
        const key = keyOf(retention.sessionKey, retention.streamId);
        const events = streams.get(key);
        if (events && events.length > Math.max(1, Math.floor(retention.keep)))
          drop(key, events, events.length - Math.max(1, Math.floor(retention.keep)));
      }
      return removed;
    },
  };
}
