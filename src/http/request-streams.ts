import type { IncomingMessage, ServerResponse } from "node:http";
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ErrorCode,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import type { LazyAbort } from "../core/lazy-abort.js";
import type { OwnRequestExtra, TaskProtocolServer } from "../mcp/task-protocol-server.js";
import { flatUuid } from "../core/flat-uuid.js";
import { flattenHead } from "./flat-head.js";
import { primingEvent, RESUMABLE_SINCE, sseEvent, type StreamEventLog } from "./resumable-streams.js";

/** The error response the SDK's `Protocol` sends for a handler's error. */
function errorResponse(id: RequestId, error: unknown): JSONRPCMessage {
  const { code, message, data } = (error ?? {}) as { code?: unknown; message?: unknown; data?: unknown };
  return {
    jsonrpc: "2.0",
    id,
    error: {
      code: Number.isSafeInteger(code) ? (code as number) : ErrorCode.InternalError,
      message: (message as string | undefined) ?? "Internal error",
      ...(data !== undefined && { data }),
    },
  };
}

/** How often an idle request stream gets an SSE comment, as the SDK's transport does (its default). */
const KEEPALIVE_MS = 15_000;

/** One request answered on an SSE stream of our own: where its messages go, and in what order. */
class RequestStream {
  /** Every write of this stream, in order: a message is stored (for resumption), then written. */
  tail: Promise<void> = Promise.resolve();

  constructor(
    readonly requestId: RequestId,
    readonly streamId: string,
    /** Whether the client got an event id (the priming event) to resume this stream from. */
    readonly resumable: boolean,
    /** The live response, or null while the client is away (resumable streams only). */
    public res: ServerResponse | null,
    /** Aborts the request's handler: the requestor withdrew it or hung up, or the session ended. */
    readonly abandoned: LazyAbort,
  ) {}
}

/**
 * The transport a local session's SDK server is connected to: the session's SDK transport for
 * everything, except the requests this endpoint answers on SSE streams of its own. A blocked
 * 2025-11-25 `tasks/result` without the session's GET stream is such a request: its answer, and
 * the task's notifications and questions meanwhile (T-NOTE-1, T-PROG-1, T-INPUT-3), go on the
 * request's own stream. The SDK's transport would serve it through a web `Request` and
 * `Response`, a `ReadableStream`, the adapter that pumps it into the socket and a keep-alive
 * timer, about 14 KB of heap per waiting request; here it is the socket, one small record, and
 * one keep-alive sweep for all the session's streams.
 *
 * The request is answered by the session server's handler for its method, with its schema check,
 * span and error mapping, but not through the SDK's `Protocol` (`TaskProtocolServer.answerOwn`):
 * its per-request context would be kept for as long as the request waits. Its cancellation is
 * kept here instead: a `notifications/cancelled` naming it ({@link withdraw}), the connection's
 * loss, the session's end abort its handler, and no answer is sent then, as the SDK sends none.
 * The questions it puts to the client still go out through the SDK server (their answers come
 * back through its `Protocol`), on this stream. The bytes on the wire are written here, in the
 * transport's format. With an event log the stream
 * starts with a priming event and every message is stored before it is written, so a client that
 * lost the connection resumes it with `Last-Event-ID` ({@link resume}); without one, a lost
 * connection ends the request (nobody could receive its answer).
 */
export class RequestStreams implements Transport {
  private readonly byRequest = new Map<RequestId, RequestStream>();
  private readonly byStream = new Map<string, RequestStream>();
  private keepalive: NodeJS.Timeout | null = null;

  constructor(
    private readonly inner: StreamableHTTPServerTransport,
    private readonly sessionId_: string,
    private readonly events: StreamEventLog | undefined,
  ) {}

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }
  get onclose(): (() => void) | undefined {
    return this.inner.onclose;
  }
  set onclose(handler: (() => void) | undefined) {
    this.inner.onclose = handler;
  }
  get onerror(): ((error: Error) => void) | undefined {
    return this.inner.onerror;
  }
  set onerror(handler: ((error: Error) => void) | undefined) {
    this.inner.onerror = handler;
  }
  get onmessage(): Transport["onmessage"] {
    return this.inner.onmessage;
  }
  set onmessage(handler: Transport["onmessage"]) {
    this.inner.onmessage = handler;
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  async close(): Promise<void> {
    this.endAll();
    await this.inner.close();
  }

  /** Messages of a request on a stream of ours go there; everything else to the SDK's transport. */
  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const answer = "result" in message || "error" in message;
    const id = answer ? (message as { id: RequestId }).id : options?.relatedRequestId;
    const stream = id === undefined ? undefined : this.byRequest.get(id);
    if (!stream) return this.inner.send(message, options);
    if (answer) this.forget(stream);
    await this.write(stream, message, answer);
  }

  /** Whether `stream` (a stream id from a Last-Event-ID) is one of ours still waiting for its answer. */
  owns(streamId: string): boolean {
    return this.byStream.has(streamId);
  }

  /**
   * Answers `message` (a request) on an SSE stream of its own on `res`: writes the stream's head
   * and priming event, then has `server` answer the request with its handler, outside the SDK's
   * `Protocol` ({@link TaskProtocolServer.answerOwn}); the answer goes on the stream as the SDK's
   * would. `abandoned` aborts the handler: a `notifications/cancelled` naming the request
   * ({@link withdraw}), the connection's loss (not resumable), the session's end.
   */
  async serve(
    req: IncomingMessage,
    res: ServerResponse,
    message: JSONRPCRequest,
    auth: AuthInfo | undefined,
    server: TaskProtocolServer,
    abandoned: LazyAbort,
  ): Promise<void> {
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
      "mcp-session-id": this.sessionId_,
    });
    flattenHead(res);
    const streamId = flatUuid();
    const version = req.headers["mcp-protocol-version"];
    // As the SDK's transport: only a client of 2025-11-25 or later understands a priming event.
    const primes = this.events !== undefined && (typeof version !== "string" || version >= RESUMABLE_SINCE);
    const primed = primes ? await this.events!.appendOrLive(this.sessionId_, streamId, {}) : null;
    if (primed !== null) res.write(primingEvent(primed, this.events!.retryMs));
    else res.flushHeaders();
    const stream = new RequestStream(message.id, streamId, primed !== null, res.destroyed ? null : res, abandoned);
    if (stream.res === null && !stream.resumable) {
      res.end();
      return;
    }
    this.byRequest.set(message.id, stream);
    this.byStream.set(streamId, stream);
    this.keepAlive();
    // `on`, not `once` (dropped() is idempotent): `once` would add a wrapper for as long as the request waits.
    res.on("close", () => this.dropped(stream, res));
    const extra: OwnRequestExtra = {
      requestId: message.id,
      sessionId: this.sessionId_,
      authInfo: auth,
      requestInfo: { headers: req.headers },
      get signal() {
        return abandoned.signal;
      },
      abandoned,
    };
    const answered = server.answerOwn(message, extra);
    if (answered === undefined) {
      // No handler of ours: the SDK's Protocol answers it (method not found), on this stream, and
      // hears of its abandonment as of a client's notifications/cancelled.
      abandoned.addEventListener("abort", () =>
        this.onmessage?.({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: message.id, reason: String(abandoned.reason) },
        }),
      );
      this.onmessage?.(message, { ...(auth && { authInfo: auth }), requestInfo: { headers: req.headers } } as MessageExtraInfo);
      return;
    }
    // Continued, not awaited: only the stream's record is kept while the request waits.
    answered.then(
      (result) => this.answered(stream, { result, jsonrpc: "2.0", id: message.id } as JSONRPCMessage),
      (error: unknown) => this.answered(stream, errorResponse(message.id, error)),
    );
  }

  /** A `notifications/cancelled` named `requestId`: a request of ours is abandoned (no answer is sent). */
  withdraw(requestId: RequestId, reason: unknown): void {
    this.byRequest.get(requestId)?.abandoned.abort(reason);
  }

  /** The handler of a request of ours answered: the answer ends its stream, unless the request was abandoned (as the SDK's `Protocol` sends none). */
  private answered(stream: RequestStream, response: JSONRPCMessage): void {
    if (stream.abandoned.aborted) return;
    this.send(response).catch((error: unknown) => this.onerror?.(new Error(`Failed to send response: ${String(error)}`)));
  }

  /**
   * GET with a Last-Event-ID of a stream of ours still waiting: the events stored after it, then
   * the stream live on `res` (taking over from any connection it still had).
   */
  async resume(streamId: string, lastEventId: string, res: ServerResponse): Promise<void> {
    const stream = this.byStream.get(streamId);
    if (!stream || !this.events) return;
    const events = this.events;
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
      "mcp-session-id": this.sessionId_,
    });
    flattenHead(res);
    res.flushHeaders();
    // In the stream's order of writes: whatever was stored before is replayed, whatever comes after goes live.
    stream.tail = stream.tail.then(async () => {
      try {
        await events.replay(this.sessionId_, streamId, lastEventId, (id, message) => void res.write(sseEvent(message, id)));
      } catch {
        // The store could not be read: the client comes back again, from the same id.
        res.end();
        return;
      }
      const previous = stream.res;
      stream.res = res.destroyed ? null : res;
      if (previous && previous !== res) previous.end();
      // Answered while the replay ran (the answer was among the replayed events).
      if (!this.byStream.has(streamId)) res.end();
    });
    res.on("close", () => this.dropped(stream, res));
    await stream.tail;
  }

  /** Ends every stream of ours without an answer: the session ended (its server aborts their requests). */
  endAll(): void {
    for (const stream of this.byRequest.values()) {
      this.forget(stream);
      stream.abandoned.abort(new Error("the session ended"));
      stream.res?.end();
      stream.res = null;
    }
  }

  private write(stream: RequestStream, message: JSONRPCMessage, last: boolean): Promise<void> {
    const events = this.events;
    stream.tail = stream.tail.then(async () => {
      const id = stream.resumable ? await events!.appendOrLive(this.sessionId_, stream.streamId, message as never) : null;
      const res = stream.res;
      if (res === null) return;
      res.write(sseEvent(message, id ?? undefined));
      if (last) {
        stream.res = null;
        res.end();
      }
    });
    return stream.tail;
  }

  /** The response of `stream` closed: a resumable stream waits for the client to come back; any other request is over. */
  private dropped(stream: RequestStream, res: ServerResponse): void {
    if (stream.res !== res) return;
    stream.res = null;
    if (stream.resumable || this.byRequest.get(stream.requestId) !== stream) return;
    this.forget(stream);
    // As the client's own notifications/cancelled would: the request's handler is aborted.
    stream.abandoned.abort("the requestor closed the connection");
  }

  private forget(stream: RequestStream): void {
    if (this.byRequest.get(stream.requestId) === stream) this.byRequest.delete(stream.requestId);
    this.byStream.delete(stream.streamId);
    if (this.byStream.size === 0 && this.keepalive !== null) {
      clearInterval(this.keepalive);
      this.keepalive = null;
    }
  }

  /** One timer for every stream of this session: a comment line keeps intermediaries from timing an idle one out. */
  private keepAlive(): void {
    if (this.keepalive !== null) return;
    this.keepalive = setInterval(() => {
      for (const stream of this.byStream.values()) stream.res?.write(": keepalive\n\n");
    }, KEEPALIVE_MS);
    this.keepalive.unref();
  }
}
