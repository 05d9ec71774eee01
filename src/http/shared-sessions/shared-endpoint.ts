import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport, type EventStore } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  isInitializeRequest,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  type ClientCapabilities,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";
import { RpcCode } from "../../core/errors.js";
import type { TaskServer } from "../../mcp/task-server.js";
import { answerPlain, plainRequestOf } from "../plain-requests.js";
import { sendRpcError } from "../json-rpc-response.js";
import { refuseSessionlessPost } from "../sessionless-post.js";
import { refuseUnsupportedVersion, withSessionVersion } from "../protocol-version.js";
import { RESUMABLE_SINCE, STANDALONE_STREAM, type StreamEventLog } from "../resumable-streams.js";
import { HttpFailure } from "../rpc-http-errors.js";
import { ReplyRouter } from "./reply-router.js";
import { RequestWithdrawals, type OpenRequest } from "./request-withdrawals.js";
import { openSessionStream, resumePostStream } from "./session-stream.js";
import { SessionTokenCodec } from "./session-token.js";
import type { SessionEndpoint } from "../session-endpoint.js";
import { peerOf } from "../request-peer.js";

export interface SharedEndpointOptions {
  /** Where SSE events are kept for Last-Event-ID resumption (on any front); without it streams carry no event ids. */
  events?: StreamEventLog;
}

/**
 * How long the server of a POST whose stream dropped stays up to finish its request (its events
 * are stored for a resumption meanwhile), at most: a question nobody answers must not hold it forever.
 */
const ORPHANED_REQUEST_MS = 60 * 60 * 1000;

/**
 * The MCP endpoint of a cluster node: no per-node session state, so a plain round-robin balancer
 * works. Session ids are signed claims any node can check (principal, client capabilities,
 * protocol version); tasks/get|list|cancel, task-augmented tools/call and tasks/result (until
 * it has an input request to deliver) are answered as plain JSON, any other POST by a fresh SDK
 * server; responses to server→client requests are routed to the node that sent them; the GET
 * stream carries the session's task notifications from the cluster's bus.
 */
export class SharedSessionEndpoint implements SessionEndpoint {
  private constructor(
    private readonly app: TaskServer,
    private readonly codec: SessionTokenCodec,
    private readonly router: ReplyRouter,
    private readonly withdrawals: RequestWithdrawals,
    private readonly options: SharedEndpointOptions,
  ) {}

  static async create(app: TaskServer, options: SharedEndpointOptions = {}): Promise<SharedSessionEndpoint> {
    await app.start();
    const secret = await app.engine.inspect.secret();
    return new SharedSessionEndpoint(
      app,
      new SessionTokenCodec(secret),
      new ReplyRouter(app.engine.bus, app.engine.logger),
      new RequestWithdrawals(app.engine.bus),
      options,
    );
  }

  close(): void {
    this.router.close();
    this.withdrawals.close();
  }

  async post(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    auth: AuthInfo | undefined,
    principal: string | null,
  ): Promise<void> {
    const header = req.headers["mcp-session-id"];
    if (typeof header !== "string") {
      if (!isInitializeRequest(body)) {
        refuseSessionlessPost(res, body);
        return;
      }
      const requested = body.params.protocolVersion;
      const sessionId = this.codec.issue({
        principal,
        capabilities: body.params.capabilities,
        protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION,
      });
      res.setHeader("mcp-session-id", sessionId);
      await this.serve(req, res, body, sessionId, undefined);
      return;
    }
    const claims = this.codec.read(header);
    if (!claims || claims.principal !== principal) {
      // Forged, from another deployment, or another principal's: all the same to the caller.
      sendRpcError(res, HttpFailure.sessionNotFound, "Session not found");
      return;
    }
    const messages = Array.isArray(body) ? body : [body];
    // A withdrawal usually comes in its own POST, to another server (or node) than its request's.
    const rest = messages.filter((message) => !this.router.route(message, header) && !this.withdrawals.route(message, header));
    if (rest.length === 0) {
      res.writeHead(202).end();
      return;
    }
    if (refuseUnsupportedVersion(req, res)) return;
    const open = this.track(rest, header, res);
    const plain = rest.length === 1 ? plainRequestOf(this.app, rest[0]) : null;
    if (plain) {
      // The session's own tasks are notified on its GET stream, fed by the bus wherever it is held.
      const session = { id: header, clientCapabilities: claims.capabilities, sessionStreamCarriesOwnTasks: true };
      const request = open[0];
      const outcome = await answerPlain(this.app, plain, auth, session, req, res, request?.abandoned);
      if (request?.withdrawn() && !res.headersSent) {
        // No answer is owed for a withdrawn request (nor sent), only the HTTP response: an empty
        // stream, which the client does not resume (it has no event ids). Not handed to a stream
        // either, even when the plain handler found it needed one: it would deliver a question there.
        res.writeHead(200, { "content-type": "text/event-stream", "mcp-session-id": header }).end();
        return;
      }
      if (outcome !== "needs-stream") return;
    }
    res.setHeader("mcp-session-id", header);
    withSessionVersion(req, claims.protocolVersion);
    await this.serve(req, res, Array.isArray(body) ? rest : rest[0], header, claims.capabilities, open);
  }

  /** Registers the requests among `messages` for withdrawal until the response closes. */
  private track(messages: unknown[], sessionId: string, res: ServerResponse): OpenRequest[] {
    const open = messages.flatMap((message) => {
      const { id, method } = (message ?? {}) as { id?: unknown; method?: unknown };
      const isRequest = typeof method === "string" && (typeof id === "string" || typeof id === "number");
      return isRequest ? [this.withdrawals.track(sessionId, id)] : [];
    });
    if (open.length > 0) res.once("close", () => open.forEach((request) => request.close()));
    return open;
  }

  /**
   * GET: the session's notification stream; with Last-Event-ID, the stream it names (the
   * notification stream or a POST's, served on this front or another) resumed after it.
   */
  async get(req: IncomingMessage, res: ServerResponse, principal: string | null): Promise<void> {
    const header = req.headers["mcp-session-id"];
    const claims = typeof header === "string" ? this.codec.read(header) : null;
    if (typeof header !== "string" || !claims || claims.principal !== principal) {
      sendRpcError(res, typeof header === "string" ? HttpFailure.sessionNotFound : HttpFailure.sessionIdMissing, "Session not found");
      return;
    }
    const events = claims.protocolVersion >= RESUMABLE_SINCE ? this.options.events : undefined;
    const lastEventId = req.headers["last-event-id"];
    if (typeof lastEventId !== "string" || !this.options.events) {
      await openSessionStream(res, header, this.app.host, events);
      return;
    }
    const streamId = await this.options.events.streamOf(header, lastEventId);
    if (streamId === null) sendRpcError(res, HttpFailure.unknownEventId, "Bad Request: unknown Last-Event-ID");
    else if (streamId === STANDALONE_STREAM) await openSessionStream(res, header, this.app.host, this.options.events, lastEventId);
    else await resumePostStream(res, header, streamId, lastEventId, this.options.events);
  }

  /** DELETE: shared sessions hold no state to release, so clients may not end them (Streamable HTTP: 405). */
  delete(req: IncomingMessage, res: ServerResponse, principal: string | null): void {
    const header = req.headers["mcp-session-id"];
    const claims = typeof header === "string" ? this.codec.read(header) : null;
    if (!claims || claims.principal !== principal) {
      sendRpcError(res, typeof header === "string" ? HttpFailure.sessionNotFound : HttpFailure.sessionIdMissing, "Session not found");
      return;
    }
    res.writeHead(HttpFailure.methodNotAllowed.status, { allow: "GET, POST" }).end();
  }

  /**
   * Closes the request's server once its response closed and, with resumable streams, once it
   * answered: a request whose stream dropped goes on (what it sends is stored, for the client
   * to resume on any front), up to {@link ORPHANED_REQUEST_MS}.
   */
  private closeWhenDone(
    server: { close(): Promise<void> },
    routed: { send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> },
    body: unknown,
    res: ServerResponse,
    sessionId: string,
    stream: { id?: string },
  ): void {
    const close = (): void => void server.close().catch(() => {});
    const { id, method } = (body ?? {}) as { id?: unknown; method?: unknown };
    const events = this.options.events;
    if (!events || typeof method !== "string" || (typeof id !== "string" && typeof id !== "number")) {
      res.once("close", close);
      return;
    }
    if (method === this.app.host.era.wire.questionStreamMethod) {
      // Not kept up: a question out on a dropped tasks/result must go back to the task's queue,
      // for the next tasks/result (on any front, of any session of the owner: T-INPUT-5) — not
      // wait in this server for a resumption that may never come. A resumption gets an error
      // saying so (stored as the stream's last event) and asks again.
      let answered = false;
      const send = routed.send.bind(routed);
      routed.send = async (message, options) => {
        await send(message, options);
        const m = message as { id?: unknown; method?: unknown };
        if (m.method === undefined && m.id === id) answered = true;
      };
      res.once("close", () => {
        close();
        if (answered || stream.id === undefined) return;
        const error = {
          code: RpcCode.ConnectionClosed,
          message: "Connection closed: this tasks/result's stream dropped; call tasks/result again to get the task's questions and result",
        };
        void events.append(sessionId, stream.id, { jsonrpc: "2.0", id, error } as JSONRPCMessage).catch(() => {});
      });
      return;
    }
    let answered = false;
    let dropped: NodeJS.Timeout | null = null;
    const send = routed.send.bind(routed);
    routed.send = async (message, options) => {
      await send(message, options);
      const m = message as { id?: unknown; method?: unknown };
      if (m.method === undefined && m.id === id) {
        answered = true;
        if (dropped) {
          clearTimeout(dropped);
          close();
        }
      }
    };
    res.once("close", () => {
      if (answered) close();
      else {
        dropped = setTimeout(close, ORPHANED_REQUEST_MS);
        dropped.unref();
      }
    });
  }

  private async serve(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    sessionId: string,
    capabilities: ClientCapabilities | undefined,
    open: OpenRequest[] = [],
  ): Promise<void> {
    const events = this.options.events;
    const stream: { id?: string } = {};
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      ...(events && { eventStore: recordingStream(events.forSession(sessionId), stream), retryInterval: events.retryMs }),
    });
    // The session's standalone stream is the GET stream, fed by the bus (session-stream.ts): this
    // server only carries what belongs on this request's own stream.
    const routed = this.router.wrap(transport, sessionId);
    const peer = peerOf(req);
    const server = await this.app.connect(routed, sessionId, {
      standaloneStream: false,
      ...(peer !== undefined && { peer }),
      ...(capabilities && { clientCapabilities: capabilities }),
    });
    this.closeWhenDone(server, routed, body, res, sessionId, stream);
    if (open.length > 0) {
      // A withdrawal goes to the server once it has taken the request (it then aborts the handler);
      // one that came before waits for that.
      const dispatch = routed.onmessage;
      routed.onmessage = (message, extra) => {
        dispatch?.(message, extra);
        const { id, method } = message as { id?: unknown; method?: unknown };
        if (method === undefined) return;
        for (const request of open) if (request.id === id) request.servedBy((cancel) => dispatch?.(cancel));
      };
    }
    await transport.handleRequest(req, res, body);
  }
}

/** The event store of one POST's transport, noting the id the transport gave the POST's stream. */
function recordingStream(store: EventStore, stream: { id?: string }): EventStore {
  return {
    ...store,
    storeEvent: (streamId, message) => {
      stream.id ??= streamId;
      return store.storeEvent(streamId, message);
    },
  };
}
