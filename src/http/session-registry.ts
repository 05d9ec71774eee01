import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { TaskProtocolServer } from "../mcp/task-protocol-server.js";
import type { LazyAbort } from "../core/lazy-abort.js";
import type { RequestStreams } from "./request-streams.js";

/** One Streamable HTTP session: its transport, its server, and who opened it. */
export interface HttpSession {
  id: string;
  transport: StreamableHTTPServerTransport;
  server: TaskProtocolServer;
  /** The principal that initialized the session; null without auth. */
  principal: string | null;
  /** Who the session counts against for the per-client cap: the principal, else the peer's network. */
  client: string;
  /** HTTP requests of this session still open (a GET stream, a blocked tasks/result, …). */
  openRequests: number;
  /** When the session last started or finished a request (ms). */
  lastActive: number;
  /** The protocol version negotiated at initialize. */
  protocolVersion: string;
  /**
   * Whether the client has asked for the standalone (GET) stream yet. Until then nothing is sent
   * or stored for it: no client can receive those events, nor resume them without an event id.
   */
  readonly standalone: { opened: boolean };
  /**
   * Aborted when the session ends (DELETE, transport closed, idle): a request our code holds
   * outside the SDK's transport (a plain tasks/result waiting on its task) is released with it,
   * as the transport releases the requests on its streams.
   */
  readonly ended: AbortController;
  /**
   * The session's requests being answered outside the SDK's transport (plain JSON), by JSON-RPC
   * id: a `notifications/cancelled` naming one aborts it, as the transport aborts the handlers of
   * the requests on its streams.
   */
  readonly plainRequests: Map<RequestId, LazyAbort>;
  /**
   * The peer of each request the session's transport is serving, by JSON-RPC id: its server's
   * handlers learn their caller's address here (the SDK hands them headers, not the socket).
   */
  readonly requestPeers: Map<RequestId, { peer: string }>;
  /** The transport its server is connected to: the SDK's, but for the requests answered on streams of our own. */
  readonly streams: RequestStreams;
}

/** Live sessions by id. A session is only ever served to the principal that created it. */
export class SessionRegistry {
  private readonly sessions = new Map<string, HttpSession>();
  private readonly perClient = new Map<string, number>();

  add(session: HttpSession): void {
    if (this.sessions.has(session.id)) return;
    this.sessions.set(session.id, session);
    this.perClient.set(session.client, this.countOf(session.client) + 1);
  }

  delete(id: string): void {
    const session = this.sessions.get(id);
    if (!session) return;
    this.sessions.delete(id);
    const ended = new Error("the session ended");
    session.ended.abort(ended);
    for (const request of session.plainRequests.values()) request.abort(ended);
    const left = this.countOf(session.client) - 1;
    if (left > 0) this.perClient.set(session.client, left);
    else this.perClient.delete(session.client);
  }

  /** Live sessions opened by `client`. */
  countOf(client: string): number {
    return this.perClient.get(client) ?? 0;
  }

  /** The session, if it exists and belongs to `principal`; otherwise null (indistinguishable). */
  lookup(id: string, principal: string | null): HttpSession | null {
    const session = this.sessions.get(id);
    if (!session || session.principal !== principal) return null;
    return session;
  }

  /** Counts `res` as activity of the session until it closes. */
  track(session: HttpSession, res: { on(event: "close", listener: () => void): unknown }, now: () => number): void {
    session.openRequests++;
    session.lastActive = now();
    // `on`, not `once`: a response closes once, and `once` would keep a wrapper for as long as the request waits.
    res.on("close", () => {
      session.openRequests--;
      session.lastActive = now();
    });
  }

  /**
   * Sessions with no open request for longer than `idleMs`. Clients rarely end sessions (the SDK
   * client's close() sends no DELETE), so without this they would accumulate forever.
   */
  idle(now: number, idleMs: number): HttpSession[] {
    return [...this.sessions.values()].filter((s) => s.openRequests === 0 && now - s.lastActive > idleMs);
  }

  get size(): number {
    return this.sessions.size;
  }

  all(): HttpSession[] {
    return [...this.sessions.values()];
  }
}
