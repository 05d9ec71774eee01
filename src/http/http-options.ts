import type { Server as NodeHttpServer } from "node:http";
import type { BearerVerifier } from "./bearer-auth.js";
import type { ProtectedResourceOptions } from "./auth/protected-resource.js";
import type { TrustProxy } from "./peer-address.js";
import type { ResumableStreamOptions } from "./resumable-streams.js";
import type { HttpTimeouts } from "./http-timeouts.js";
import type { HttpRoute } from "./route-table.js";
import type { SessionRegistry } from "./session-registry.js";

/** The largest request body (HTTP) or message line (stdio) the server reads: 4 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

/** Options of {@link serveHttp}; the time limits on receiving a request are {@link HttpTimeouts}. */
export interface HttpOptions extends HttpTimeouts {
  /** Default 3000; 0 picks a free port. */
  port?: number;
  /**
   * Default 127.0.0.1. On a loopback address (127.0.0.0/8, ::1, localhost) every request's Host
   * must be a loopback name with the server's port, else HTTP 403 (DNS-rebinding protection).
   */
  host?: string;
  /** MCP endpoint path; default "/mcp". */
  path?: string;
  /**
   * Origins whose pages may use the server (the `Origin` header, T-HTTP-1), each
   * `http(s)://host[:port]` (else a TypeError), besides those always served: requests without an
   * Origin (MCP clients are not browsers), loopback origins, and `http://<host>:<port>` of a bind
   * to one address. Any other Origin is refused with HTTP 403. Behind a proxy or on 0.0.0.0, list
   * the public origins the web view is opened at. Default: none.
   */
  allowedOrigins?: readonly string[];
  /** Bearer verification; without it the endpoint is open and tasks are bound to no owner. */
  verifier?: BearerVerifier;
  /**
   * Serve the OAuth protected-resource metadata (RFC 9728) at /.well-known/oauth-protected-resource
   * (and its /mcp-suffixed form), and point 401/403 challenges at it (`resource_metadata`).
   */
  protectedResource?: ProtectedResourceOptions;
  /** Largest request body; default 4 MiB. */
  maxBodyBytes?: number;
  /**
   * A session with no open request for this long is closed (its tasks are not affected: they are
   * not bound to sessions). Default 30 minutes.
   */
  sessionIdleMs?: number;
  /**
   * Local sessions this process holds at most (each keeps an MCP server in memory until it ends or
   * idles out); an initialize beyond it is refused with HTTP 503. Default 10,000.
   */
  maxSessions?: number;
  /**
   * Local sessions one client may hold at once — a principal, or without auth an address (an
   * IPv6 /64); beyond it initialize is refused with HTTP 429. Default 100.
   */
  maxSessionsPerClient?: number;
  /**
   * More paths to serve beside the MCP endpoint, e.g. the web view's `webRoutes(…)`. Always
   * served too: /healthz, /readyz, /metrics and `POST /events/{name}`.
   */
  routes?: readonly HttpRoute[];
  /**
   * Bearer tokens that may emit events for any owner (`POST /events/{name}?owner=<owner key>`,
   * docs/durable-execution.md): give the web view's admin tokens. Anyone else emits for the owner
   * its token resolves to, as on the MCP endpoint.
   */
  adminTokens?: readonly string[];
  /** When set, /metrics requires this bearer token; unset, /metrics is open (counts only, no task data). */
  metricsToken?: string;
  /**
   * "local": Streamable HTTP sessions held by this process (one node). "shared": signed session
   * ids any node can serve, for a cluster behind a balancer without sticky sessions. Default:
   * "shared" when the server runs in cluster mode, else "local".
   */
  sessions?: "local" | "shared";
  /**
   * Proxies in front of the server whose `X-Forwarded-For` names the client's address (for rate
   * limits and the audit log): true for one, a number for a chain. Default false: the header is
   * ignored, since any client can send one.
   */
  trustProxy?: TrustProxy;
  /**
   * Resumable streams (Streamable HTTP "Resumability and Redelivery"): every SSE stream starts with
   * a priming event, its events carry ids and are kept in the task store's database (in memory
   * for a store without one), and a client reconnecting with `Last-Event-ID` gets what it
   * missed. Retention: 1 hour and 1000 events per stream by default. False: streams carry no ids.
   */
  resumableStreams?: ResumableStreamOptions | false;
  /**
   * Stop as `mcp-tasks serve` does on the process's first SIGINT or SIGTERM (a Ctrl-C, a
   * deploy's stop): drain — new tasks are refused, running handlers get {@link drainTimeoutMs}
   * to finish, the rest are handed back (re-run at the next start, or by another worker in a
   * cluster), never failed — then close the server and exit the process with code 0. A second
   * signal more than a second after the first exits at once (128 + its number), leaving what
   * still runs to recovery. Default true; false leaves the signals to you (call `app.drain()`
   * and `close()` yourself). The handlers are the process's own, installed once however many
   * servers it runs, and removed when the last of them is closed.
   */
  handleSignals?: boolean;
  /** On a stop signal ({@link handleSignals}): how long running handlers get to finish, in ms. Default 30,000. */
  drainTimeoutMs?: number;
}

/** What {@link serveHttp} returns: where it listens, its sessions, the Node server, and `close()`. */
export interface HttpHandle {
  url: string;
  port: number;
  /** Sessions held by this process ("local" mode; always empty with shared sessions). */
  sessions: SessionRegistry;
  server: NodeHttpServer;
  close(): Promise<void>;
}
