import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import {
  isInitializeRequest,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  type JSONRPCRequest,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import { networkOf } from "../core/caller.js";
import type { TaskServer } from "../mcp/task-server.js";
import { cancelledRequestIdOf, cancelReasonOf } from "./cancelled-request.js";
import { answerPlain, plainRequestOf } from "./plain-requests.js";
import { sendRpcError } from "./json-rpc-response.js";
import { refuseSessionlessPost } from "./sessionless-post.js";
import { LazyAbort } from "../core/lazy-abort.js";
import { peerOf } from "./request-peer.js";
import { refuseUnsupportedVersion, withSessionVersion } from "./protocol-version.js";
import { RequestStreams } from "./request-streams.js";
import { primeStandaloneStream, RESUMABLE_SINCE, STANDALONE_STREAM, type StreamEventLog } from "./resumable-streams.js";
import { HttpFailure } from "./rpc-http-errors.js";
import type { SessionEndpoint } from "./session-endpoint.js";
import { SessionRegistry, type HttpSession } from "./session-registry.js";

/** Default of {@link LocalSessionOptions.maxSessions}. */
export const DEFAULT_MAX_SESSIONS = 10_000;
/** Default of {@link LocalSessionOptions.maxSessionsPerClient}. */
export const DEFAULT_MAX_SESSIONS_PER_CLIENT = 100;

export interface LocalSessionOptions {
  /** A session with no open request for this long is closed. Default 30 minutes. */
  sessionIdleMs?: number;
  /** Sessions this process holds at most; an initialize beyond it is refused with 503. */
  maxSessions?: number;
  /** Sessions one client (a principal, or an address's network) holds at most; beyond it 429. */
  maxSessionsPerClient?: number;
  /** Where SSE events are kept for Last-Event-ID resumption; without it streams carry no event ids. */
  events?: StreamEventLog;
}

/**
 * The MCP endpoint of a single node: Streamable HTTP sessions held in this process, each with its
 * SDK transport and server until it is deleted or idles out. tasks/get|list|cancel and a
 * task-augmented tools/call are answered as plain JSON (T-GET-4); everything else goes through
 * the session's transport. The peer of {@link SharedSessionEndpoint}, with the same shape.
 */
export class LocalSessionEndpoint implements SessionEndpoint {
  readonly sessions = new SessionRegistry();
  private readonly idleSweep: NodeJS.Timeout;
  private readonly maxSessions: number;
  private readonly maxSessionsPerClient: number;

  constructor(
    private readonly app: TaskServer,
    private readonly options: LocalSessionOptions = {},
  ) {
    this.maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
    this.maxSessionsPerClient = options.maxSessionsPerClient ?? DEFAULT_MAX_SESSIONS_PER_CLIENT;
    const idleMs = options.sessionIdleMs ?? 30 * 60 * 1000;
    this.idleSweep = setInterval(() => this.closeIdle(idleMs), Math.max(10, Math.min(idleMs / 2, 60_000)));
    this.idleSweep.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.idleSweep);
    for (const session of this.sessions.all()) await session.transport.close().catch(() => {});
  }

  // Not `async`: a promise returned from an async function is kept by one more step (the job
  // that resolves the function's own promise with it) for as long as the request waits.
  post(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    auth: AuthInfo | undefined,
    principal: string | null,
  ): void | Promise<void> {
    const header = req.headers["mcp-session-id"];
    if (typeof header !== "string") {
      if (!isInitializeRequest(body)) {
        refuseSessionlessPost(res, body);
        return;
      }
      return this.initialize(req, res, body, principal);
    }
    const session = this.sessions.lookup(header, principal);
    if (!session) {
      // Unknown, closed, or another principal's session: all the same to the caller.
      sendRpcError(res, HttpFailure.sessionNotFound, "Session not found");
      return;
    }
    this.sessions.track(session, res, Date.now);
    withdrawPlainRequests(session, body);
    const plain = plainRequestOf(this.app, body);
    if (plain) {
      // The SDK transport checks this on its path; ours must too (Streamable HTTP: MUST answer 400).
      if (refuseUnsupportedVersion(req, res)) return;
      // A session's own task sends its notifications on the session's standalone stream once the
      // client has opened it (status-notifications.ts), so its tasks/result then carries nothing but
      // the answer and is one plain JSON response, without the SDK's per-request stream (the bulk
      // of a wake-up's CPU). Before that, the tasks/result stream is where they can go.
      const where = {
        id: session.id,
        clientCapabilities: session.server.getClientCapabilities(),
        sessionStreamCarriesOwnTasks: session.standalone.opened,
      };
      // Aborted by a withdrawal naming it, by the session's end (SessionRegistry.delete), or when
      // the connection closes (answerPlain).
      const abandoned = new LazyAbort();
      if (session.ended.signal.aborted) abandoned.abort(session.ended.signal.reason);
      session.plainRequests.set(plain.id, abandoned);
      // Continued, not awaited: no frame of this method is kept while the request waits.
      return answerPlain(this.app, plain, auth, where, req, res, abandoned).then(
        (outcome) => {
          answeredPlainly(session, plain.id, abandoned);
          if (outcome === "abandoned" || abandoned.aborted) {
            // Never handed to a stream, even when the plain handler found it needed one: it would
            // deliver a question there to a requestor that no longer waits.
            if (res.headersSent || res.destroyed) return;
            // The session ended while the request waited: answered as any request of an ended session is.
            if (session.ended.signal.aborted) sendRpcError(res, HttpFailure.sessionNotFound, "Session not found");
            // Withdrawn (notifications/cancelled): no answer is owed, only the HTTP response, an empty
            // stream the client does not resume (it has no event ids).
            else res.writeHead(200, { "content-type": "text/event-stream", "mcp-session-id": session.id }).end();
            return;
          }
          if (outcome === "needs-stream") {
            const questionStream = plain.method === this.app.host.era.wire.questionStreamMethod;
            return this.streamed(session, req, res, body, auth, questionStream ? abandoned : null);
          }
        },
        (error: unknown) => {
          answeredPlainly(session, plain.id, abandoned);
          throw error;
        },
      );
    }
    return this.streamed(session, req, res, body, auth, null);
  }

  /**
   * A request answered on a stream: a blocked tasks/result (its plain answer found it needs one;
   * `questionStream` is its abort) on a stream of our own, its handler run outside the SDK's
   * `Protocol`; anything else by the session's SDK transport.
   */
  private async streamed(
    session: HttpSession,
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    auth: AuthInfo | undefined,
    questionStream: LazyAbort | null,
  ): Promise<void> {
    withSessionVersion(req, session.protocolVersion);
    if (questionStream && acceptsStream(req)) {
      // Its handler reads its caller's peer as it starts (serve() starts it): noted only until then.
      const noted = notePeer(session, body, req);
      try {
        await session.streams.serve(req, res, body as JSONRPCRequest, auth, session.server, questionStream);
      } finally {
        if (noted) forgetPeer(session, noted);
      }
      return;
    }
    servingPeer(session, body, req, res);
    await session.transport.handleRequest(req, res, body);
  }

  /**
   * GET: the session's standalone stream, served by its transport; with `Last-Event-ID`, the
   * events of the stream it names (a POST's or the standalone one) after it, then that stream live.
   */
  async get(req: IncomingMessage, res: ServerResponse, principal: string | null): Promise<void> {
    const header = req.headers["mcp-session-id"];
    const session = typeof header === "string" ? this.sessions.lookup(header, principal) : null;
    const events = this.options.events;
    const lastEventId = req.headers["last-event-id"];
    if (session && events && typeof lastEventId === "string" && (await events.streamOf(session.id, lastEventId)) === null) {
      // Malformed, pruned, or another session's: nothing to resume from (as the SDK answers it).
      sendRpcError(res, HttpFailure.unknownEventId, "Bad Request: unknown Last-Event-ID");
      return;
    }
    if (session && events && typeof lastEventId === "string") {
      const streamId = await events.streamOf(session.id, lastEventId);
      if (streamId !== null && session.streams.owns(streamId)) {
        this.sessions.track(session, res, Date.now);
        await session.streams.resume(streamId, lastEventId, res);
        return;
      }
    }
    // From now on the stream's events are sent and kept for it (resumable after its priming event).
    if (session) session.standalone.opened = true;
    if (session && events && lastEventId === undefined && session.protocolVersion >= RESUMABLE_SINCE) {
      // The SDK primes the streams of POSTs only: the standalone one gets its priming event here.
      // Not stored (a full disk): the stream works, but offers nothing to resume from.
      const primed = await events.appendOrLive(session.id, STANDALONE_STREAM, {});
      if (primed !== null) primeStandaloneStream(res, primed, events.retryMs);
    }
    await this.toTransport(req, res, principal);
  }

  /** DELETE: ends the session (its tasks are not bound to it and carry on). */
  async delete(req: IncomingMessage, res: ServerResponse, principal: string | null): Promise<void> {
    await this.toTransport(req, res, principal);
  }

  private async toTransport(req: IncomingMessage, res: ServerResponse, principal: string | null): Promise<void> {
    const header = req.headers["mcp-session-id"];
    const session = typeof header === "string" ? this.sessions.lookup(header, principal) : null;
    if (!session) {
      sendRpcError(res, typeof header === "string" ? HttpFailure.sessionNotFound : HttpFailure.sessionIdMissing, "Session not found");
      return;
    }
    this.sessions.track(session, res, Date.now);
    withSessionVersion(req, session.protocolVersion);
    await session.transport.handleRequest(req, res);
  }

  private async initialize(req: IncomingMessage, res: ServerResponse, body: unknown, principal: string | null): Promise<void> {
    const client = principal ?? `peer:${networkOf(peerOf(req))}`;
    if (this.refuseSession(res, client, peerOf(req))) return;
    const id = randomUUID();
    const events = this.options.events;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      ...(events && { eventStore: events.forSession(id), retryInterval: events.retryMs }),
      onsessionclosed: (closed) => this.sessions.delete(closed),
    });
    // Set before connecting: the SDK's Protocol chains an existing onclose with its own, which
    // closes the session server (its notification link, in-flight handlers). Assigned after
    // connecting, it would replace that and leave a dead session's server listening forever.
    transport.onclose = () => this.sessions.delete(id);
    const standalone = { opened: false };
    const requestPeers = new Map<RequestId, { peer: string }>();
    const streams = new RequestStreams(transport, id, events);
    const server = await this.app.connect(streams, id, {
      standaloneStreamOpened: () => standalone.opened,
      requestPeer: (requestId) => requestPeers.get(requestId)?.peer,
    });
    const requested = (body as { params: { protocolVersion: string } }).params.protocolVersion;
    const protocolVersion = SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
    const session = {
      id,
      transport,
      server,
      principal,
      client,
      openRequests: 0,
      lastActive: Date.now(),
      protocolVersion,
      standalone,
      ended: new AbortController(),
      plainRequests: new Map<RequestId, LazyAbort>(),
      requestPeers,
      streams,
    };
    // The session's end (DELETE, idle, close) ends the streams of ours its transport knows nothing of.
    session.ended.signal.addEventListener("abort", () => streams.endAll(), { once: true });
    this.sessions.add(session);
    this.sessions.track(session, res, Date.now);
    await transport.handleRequest(req, res, body);
  }

  /**
   * Refuses an initialize over a session cap (T-TTL-7's "limit resources" for what a session holds):
   * 503 when the process is full, 429 when this client holds its share. Each a JSON-RPC -32600
   * with `data {name, limit}`, like the other per-requestor quotas. True when refused.
   */
  private refuseSession(res: ServerResponse, client: string, peer: string | undefined): boolean {
    const { maxSessions, maxSessionsPerClient } = this;
    const full = this.sessions.size >= maxSessions;
    if (!full && this.sessions.countOf(client) < maxSessionsPerClient) return false;
    const refusal = full
      ? {
          limit: maxSessions,
          name: "sessions" as const,
          failure: HttpFailure.tooManySessions,
          message: `Too many sessions on this server (at most ${maxSessions}); try again later`,
        }
      : {
          limit: maxSessionsPerClient,
          name: "sessions_per_client" as const,
          failure: HttpFailure.tooManyClientSessions,
          message: `Too many sessions for this client: at most ${maxSessionsPerClient}; end one (DELETE) or let one idle out`,
        };
    const { limit, name, failure, message } = refusal;
    this.app.engine.observer.limitRejected(name);
    this.app.engine.logger.warn(
      { audit: "limit_hit", limit: name, owner: null, method: "initialize", peer: peer ?? null, taskId: null },
      `limit hit: ${name}`,
    );
    sendRpcError(res, failure, message, { data: { name, limit }, ...(full && { headers: { "retry-after": "60" } }) });
    return true;
  }

  private closeIdle(idleMs: number): void {
    for (const session of this.sessions.idle(Date.now(), idleMs)) {
      this.app.engine.logger.info({ sessionId: session.id }, "closing idle session");
      this.sessions.delete(session.id);
      void session.transport.close().catch(() => {});
    }
  }
}

/** A plain request of `session` is over: a withdrawal naming its id no longer concerns it. */
function answeredPlainly(session: HttpSession, id: RequestId, abandoned: LazyAbort): void {
  if (session.plainRequests.get(id) === abandoned) session.plainRequests.delete(id);
}

/**
 * Aborts the plain requests of `session` that a `notifications/cancelled` in `body` names. The
 * message still goes on to the SDK transport, which ends the handlers of its own requests.
 */
function withdrawPlainRequests(session: HttpSession, body: unknown): void {
  for (const message of Array.isArray(body) ? body : [body]) {
    const id = cancelledRequestIdOf(message);
    if (id === undefined) continue;
    const reason = cancelReasonOf(message);
    session.plainRequests.get(id)?.abort(reason);
    session.streams.withdraw(id, reason);
  }
}

/**
 * Notes the peer of a request the session's transport is about to serve, for its handler to
 * find by the request's id until its response ends. A session that reuses the id of a request
 * still in flight (which JSON-RPC forbids) can only mislabel its own requests.
 */
function servingPeer(session: HttpSession, body: unknown, req: IncomingMessage, res: ServerResponse): void {
  const noted = notePeer(session, body, req);
  if (noted) res.once("close", () => forgetPeer(session, noted));
}

/** Notes the peer of the request `body` by its id (see {@link servingPeer}); what {@link forgetPeer} takes off, or null. */
function notePeer(session: HttpSession, body: unknown, req: IncomingMessage): { id: RequestId; entry: { peer: string } } | null {
  if (typeof body !== "object" || body === null) return null;
  const { id, method } = body as { id?: unknown; method?: unknown };
  const peer = peerOf(req);
  if (typeof method !== "string" || (typeof id !== "string" && typeof id !== "number") || peer === undefined) return null;
  const entry = { peer };
  session.requestPeers.set(id, entry);
  return { id, entry };
}

function forgetPeer(session: HttpSession, { id, entry }: { id: RequestId; entry: { peer: string } }): void {
  if (session.requestPeers.get(id) === entry) session.requestPeers.delete(id);
}

/** Whether the request accepts what a POST may be answered with (both, as the SDK's transport requires, else it answers 406). */
function acceptsStream(req: IncomingMessage): boolean {
  const accept = req.headers.accept ?? "";
  return accept.includes("text/event-stream") && accept.includes("application/json");
}
