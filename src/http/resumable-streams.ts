import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { EventStore } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../core/logger.js";
import { memoryStreamEvents } from "../store/memory/memory-stream-events.js";
import { DEFAULT_STREAM_EVENT_MAX_AGE_MS, DEFAULT_STREAM_EVENTS_PER_STREAM, type StreamEventStore } from "../store/stream-event-store.js";
import type { TaskReadPort } from "../runtime/task-read-port.js";

/** Options of {@link HttpOptions.resumableStreams}. */
export interface ResumableStreamOptions {
  /** An event older than this can no longer be replayed. Default 1 hour. */
  maxAgeMs?: number;
  /** Each stream keeps at most this many of its newest events. Default 1000. */
  eventsPerStream?: number;
  /** The `retry` (ms) the priming event tells clients to wait before reconnecting. Default 1000. */
  retryMs?: number;
}

/** Default of {@link ResumableStreamOptions.retryMs}. */
export const DEFAULT_STREAM_RETRY_MS = 1000;
/** Events read from the store per query while replaying. */
const REPLAY_PAGE = 500;
/** The data of a priming event as stored: no JSON-RPC message is an empty object. */
const PRIMING = "{}";

/**
 * The SSE events of this server's Streamable HTTP streams, kept in the task store's database when
 * it has a {@link StreamEventStore} (else in memory), with bounded retention: events older than
 * `maxAgeMs` are pruned on an interval, a stream past `eventsPerStream` as it is written.
 */
export class StreamEventLog {
  readonly retryMs: number;
  private readonly maxAgeMs: number;
  private readonly perStream: number;
  /** Writes per stream since it was last trimmed (bounded: cleared when it grows large). */
  private readonly sinceTrim = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly store: StreamEventStore,
    private readonly logger: Logger,
    options: ResumableStreamOptions = {},
    private readonly now: () => number = Date.now,
  ) {
    this.maxAgeMs = Math.max(1, options.maxAgeMs ?? DEFAULT_STREAM_EVENT_MAX_AGE_MS);
    this.perStream = Math.max(1, Math.floor(options.eventsPerStream ?? DEFAULT_STREAM_EVENTS_PER_STREAM));
    this.retryMs = Math.max(0, Math.floor(options.retryMs ?? DEFAULT_STREAM_RETRY_MS));
    this.timer = setInterval(() => void this.pruneOld(), Math.max(10, Math.min(this.maxAgeMs / 4, 60_000)));
    this.timer.unref();
  }

  /** The log of `app`'s store: its own stream events, else a private in-memory one. */
  static of(store: Pick<TaskReadPort, "streamEvents">, logger: Logger, options: ResumableStreamOptions = {}): StreamEventLog {
    return new StreamEventLog(store.streamEvents ?? memoryStreamEvents(), logger, options);
  }

  close(): void {
    clearInterval(this.timer);
  }

  /** Deletes the events past the age bound; returns how many. */
  async pruneOld(): Promise<number> {
    try {
      return await this.store.prune({ before: this.now() - this.maxAgeMs });
    } catch (error) {
      this.logger.warn({ err: error }, "could not prune stored stream events");
      return 0;
    }
  }

  /** Stores one event of a session's stream; returns its SSE id. */
  async append(sessionId: string, streamId: string, message: JSONRPCMessage | Record<string, never>): Promise<string> {
    const sessionKey = sessionKeyOf(sessionId);
    const id = await this.store.append({ sessionKey, streamId, message: JSON.stringify(message), now: this.now() });
    this.trimLater(sessionKey, streamId);
    return String(id);
  }

  /**
   * {@link append}, but a store that cannot take the event (a full disk, a read-only file) costs
   * only the event's resumability, never the message: it is logged and null is returned, and the
   * caller writes the message live without an SSE id. Refusing it instead would leave a request
   * whose answer could not be stored without any answer at all.
   */
  async appendOrLive(sessionId: string, streamId: string, message: JSONRPCMessage | Record<string, never>): Promise<string | null> {
    try {
      return await this.append(sessionId, streamId, message);
    } catch (error) {
      this.logger.warn({ err: error }, "could not store a stream event; it is sent without an id to resume from");
      return null;
    }
  }

  /** The stream (of this session) an SSE id names, or null: malformed, unknown, pruned, another session's. */
  async streamOf(sessionId: string, eventId: string): Promise<string | null> {
    const id = eventIdOf(eventId);
    return id === null ? null : this.store.streamOf(sessionKeyOf(sessionId), id);
  }

  /** Sends the session's events of `streamId` after `eventId` (priming events left out); returns the last id sent, or `eventId`. */
  async replay(
    sessionId: string,
    streamId: string,
    eventId: string,
    send: (id: string, message: JSONRPCMessage) => Promise<void> | void,
  ): Promise<string> {
    const sessionKey = sessionKeyOf(sessionId);
    let after = eventIdOf(eventId) ?? 0;
    for (;;) {
      const page = await this.store.after(sessionKey, streamId, after, REPLAY_PAGE);
      for (const event of page) {
        after = event.id;
        if (event.message !== PRIMING) await send(String(event.id), JSON.parse(event.message) as JSONRPCMessage);
      }
      if (page.length < REPLAY_PAGE) return String(after);
    }
  }

  /**
   * The SDK transport's {@link EventStore} for one session. Without `getStreamIdForEventId` on
   * purpose: with it the transport refuses (409) a resumption while it still holds the stream
   * open, and a dropped connection may go unnoticed by the server for long (a half-open TCP
   * connection); without it the resumed stream takes over. An unknown id is refused before
   * (LocalSessionEndpoint.get).
   */
  forSession(sessionId: string): EventStore {
    return {
      // "" is no id: the SDK writes the event without an `id:` line.
      storeEvent: async (streamId, message) => (await this.appendOrLive(sessionId, streamId, message)) ?? "",
      replayEventsAfter: async (eventId, { send }) => {
        const streamId = await this.streamOf(sessionId, eventId);
        if (streamId === null) throw new Error("unknown event id");
        await this.replay(sessionId, streamId, eventId, send);
        return streamId;
      },
    };
  }

  private trimLater(sessionKey: string, streamId: string): void {
    const key = `${sessionKey}\u0000${streamId}`;
    const writes = (this.sinceTrim.get(key) ?? 0) + 1;
    // Every tenth of the bound: a stream holds at most 10% more than it, in one query per that many writes.
    if (writes < Math.max(1, Math.ceil(this.perStream / 10))) {
      if (this.sinceTrim.size > 10_000) this.sinceTrim.clear();
      this.sinceTrim.set(key, writes);
      return;
    }
    this.sinceTrim.delete(key);
    this.store
      .prune({ sessionKey, streamId, keep: this.perStream })
      .catch((error: unknown) => this.logger.warn({ err: error }, "could not trim a stream's stored events"));
  }
}

/** Sessions are keyed by a digest of their id: a shared session's id is a long signed token. */
function sessionKeyOf(sessionId: string): string {
  return createHash("sha256").update(sessionId).digest("base64url");
}

/** An SSE id this log issued (a positive integer), or null. */
function eventIdOf(eventId: string): number | null {
  if (!/^[1-9][0-9]{0,15}$/.test(eventId)) return null;
  const id = Number(eventId);
  return Number.isSafeInteger(id) ? id : null;
}

/** The priming event of a stream: its id, the reconnection delay, and empty data (Streamable HTTP, 2025-11-25). */
export function primingEvent(id: string, retryMs: number): string {
  return `id: ${id}\nretry: ${retryMs}\ndata: \n\n`;
}

/** One message as an SSE event, in the SDK transport's format (an `id:` line when it has one). */
export function sseEvent(message: JSONRPCMessage, id: string | undefined): string {
  return `event: message\n${id === undefined ? "" : `id: ${id}\n`}data: ${JSON.stringify(message)}\n\n`;
}

/** The SDK transport's id of a session's standalone (GET) stream. */
export const STANDALONE_STREAM = "_GET_stream";
/** The first protocol version whose clients understand a priming event's empty data. */
export const RESUMABLE_SINCE = "2025-11-25";

/**
 * Writes a priming event first on the SSE response the SDK transport is about to start: right
 * after its `writeHead(200, …)` and before any chunk of its body. Only a 200 is primed (a refusal,
 * e.g. a second GET stream's 409, is left as it is).
 */
export function primeStandaloneStream(res: ServerResponse, eventId: string, retryMs: number): void {
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  const patched = (...args: unknown[]): ServerResponse => {
    res.writeHead = writeHead as ServerResponse["writeHead"];
    const written = writeHead(...args);
    if (args[0] === 200) res.write(primingEvent(eventId, retryMs));
    return written;
  };
  res.writeHead = patched as ServerResponse["writeHead"];
}
