import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server as NodeHttpServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { isInitializeRequest, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import { currentRequestPeer, withRequestPeer } from "../mcp/request-peer.js";
import { networkOf } from "../core/caller.js";
import type { TaskServer } from "../mcp/task-server.js";
import { InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { ScopeRequiredError, VerifierUnavailableError, type BearerVerifier } from "./bearer-auth.js";
import { protectedResourceMetadataUrl, protectedResourceRoutes, type ProtectedResourceOptions } from "./auth/protected-resource.js";
import { answerPlain, plainRequestOf } from "./plain-requests.js";
import { sendJson, sendRpcError } from "./json-rpc-response.js";
import { BodyTooLargeError, readBody } from "./read-body.js";
import { opsRoutes } from "./ops-routes.js";
import { peerAddress, type TrustProxy } from "./peer-address.js";
import { REQUEST_ID_HEADER, requestIdOf } from "./request-id.js";
import { RouteTable, type HttpRoute } from "./route-table.js";
import { SessionRegistry } from "./session-registry.js";
import { SharedSessionEndpoint } from "./shared-sessions/shared-endpoint.js";

/** Options of {@link serveHttp}. */
export interface HttpOptions {
  /** Default 3000; 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** MCP endpoint path; default "/mcp". */
  path?: string;
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
   * served too: /healthz, /readyz and /metrics.
   */
  routes?: readonly HttpRoute[];
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
}

export interface HttpHandle {
  url: string;
  port: number;
  /** Sessions held by this process ("local" mode; always empty with shared sessions). */
  sessions: SessionRegistry;
  server: NodeHttpServer;
  close(): Promise<void>;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

/** Default of {@link HttpOptions.maxSessions}. */
export const DEFAULT_MAX_SESSIONS = 10_000;
/** Default of {@link HttpOptions.maxSessionsPerClient}. */
export const DEFAULT_MAX_SESSIONS_PER_CLIENT = 100;

/**
 * Serves a {@link TaskServer} over Streamable HTTP with sessions. `tasks/get`, `tasks/list` and
 * `tasks/cancel` are answered as plain JSON (T-GET-4); everything else goes through the SDK's
 * transport (SSE where the request needs a stream, e.g. `tasks/result` delivering input requests).
 */
export async function serveHttp(app: TaskServer, options: HttpOptions = {}): Promise<HttpHandle> {
  if (app.config.bind === "session" && options.verifier) {
    // With authentication tasks are bound to the principal, across its sessions; binding them to
    // a session as well would break the per-owner quotas and the web view's owner scope.
    throw new Error('bind: "session" is for deployments without authentication; with a verifier tasks are bound to the principal');
  }
  await app.start();
  const host = options.host ?? "127.0.0.1";
  const path = options.path ?? "/mcp";
  const maxBodyBytes = options.maxBodyBytes ?? 4 * 1024 * 1024;
  const sessions = new SessionRegistry();
  const sessionIdleMs = options.sessionIdleMs ?? 30 * 60 * 1000;
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const maxSessionsPerClient = options.maxSessionsPerClient ?? DEFAULT_MAX_SESSIONS_PER_CLIENT;
  const idleSweep = setInterval(
    () => {
      for (const session of sessions.idle(Date.now(), sessionIdleMs)) {
        logger.info({ sessionId: session.id }, "closing idle session");
        sessions.delete(session.id);
        void session.transport.close().catch(() => {});
      }
    },
    Math.max(10, Math.min(sessionIdleMs / 2, 60_000)),
  );
  idleSweep.unref();
  const logger = app.engine.logger;
  let port = options.port ?? 3000;

  // Known once listening (the default resource is the listen URL, and port 0 picks the port then).
  let resourceUrl = "";
  const resourceOf = (): string => options.protectedResource?.resource ?? resourceUrl;

  /** An RFC 6750 challenge; quoted-string values escaped, `resource_metadata` per RFC 9728 §5.1. */
  const challenge = (params: Record<string, string>): string => {
    const all = options.protectedResource ? { ...params, resource_metadata: protectedResourceMetadataUrl(resourceOf()) } : params;
    const pairs = Object.entries(all).map(([key, value]) => `${key}="${value.replace(/["\\]/g, "\\$&")}"`);
    return pairs.length === 0 ? "Bearer" : `Bearer ${pairs.join(", ")}`;
  };

  /** The request's AuthInfo, undefined without a verifier, or false once a 401/403 has been sent. */
  const authenticate = async (req: IncomingMessage, res: ServerResponse): Promise<AuthInfo | undefined | false> => {
    if (!options.verifier) return undefined;
    try {
      const auth = await options.verifier(req);
      if (auth) return auth;
      // RFC 6750 §3.1: a request that carries no credentials gets a bare challenge, no error code.
      const presented = req.headers.authorization !== undefined;
      sendRpcError(res, 401, -32001, "Unauthorized: a valid bearer token is required", null, {
        "www-authenticate": challenge(presented ? { error: "invalid_token", error_description: "a valid bearer token is required" } : {}),
      });
    } catch (error) {
      // Order matters: the scope error is the more specific OAuth error. The descriptions come
      // from the verifier's own fixed wording, never from the token.
      if (error instanceof ScopeRequiredError) {
        sendRpcError(res, 403, -32001, `Forbidden: ${error.message}`, null, {
          "www-authenticate": challenge({ error: "insufficient_scope", scope: error.requiredScopes.join(" "), error_description: error.message }),
        });
      } else if (error instanceof InvalidTokenError) {
        sendRpcError(res, 401, -32001, `Unauthorized: ${error.message}`, null, {
          "www-authenticate": challenge({ error: "invalid_token", error_description: error.message }),
        });
      } else throw error;
    }
    return false;
  };

  /**
   * Refuses an initialize over a session cap (T-TTL-7's "limit resources" for what a session holds):
   * 503 when the process is full, 429 when this client holds its share. Each a JSON-RPC -32600
   * with `data {name, limit}`, like the other per-requestor quotas.
   */
  const refuseSession = (res: ServerResponse, client: string): boolean => {
    const full = sessions.size >= maxSessions;
    if (!full && sessions.countOf(client) < maxSessionsPerClient) return false;
    const [limit, name, status, message] = full
      ? [maxSessions, "sessions", 503, `Too many sessions on this server (at most ${maxSessions}); try again later`]
      : [maxSessionsPerClient, "sessions_per_client", 429, `Too many sessions for this client: at most ${maxSessionsPerClient}; end one (DELETE) or let one idle out`];
    app.engine.observer.limitRejected(full ? "sessions" : "sessions_per_client");
    logger.warn({ audit: "limit_hit", limit: name, owner: null, method: "initialize", peer: currentRequestPeer() ?? null, taskId: null }, `limit hit: ${name}`);
    res.writeHead(status, { "content-type": "application/json", ...(full && { "retry-after": "60" }) });
    res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message, data: { name, limit } } }));
    return true;
  };

  const newSession = async (): Promise<{ id: string; transport: StreamableHTTPServerTransport }> => {
    const id = randomUUID();
    const allowedHosts = allowedHostsFor();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      ...(allowedHosts && { allowedHosts, enableDnsRebindingProtection: true }),
      onsessionclosed: (closed) => sessions.delete(closed),
    });
    return { id, transport };
  };

  const allowedHostsFor = (): string[] | undefined =>
    LOOPBACK.has(host) ? [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`] : undefined;
  const shared = (options.sessions ?? (app.engine.clustered ? "shared" : "local")) === "shared" ? await SharedSessionEndpoint.create(app, { allowedHosts: allowedHostsFor }) : null;

  const routes = new RouteTable([
    ...opsRoutes(app, options.metricsToken === undefined ? {} : { metricsToken: options.metricsToken }),
    ...(options.protectedResource ? protectedResourceRoutes(path, resourceOf, options.protectedResource) : []),
    ...(options.routes ?? []),
  ]);

  const handle = async (req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (url.pathname !== path) {
      if (await routes.dispatch(req, res, { url, requestId, logger })) return;
      sendJson(res, 404, { error: "not found" });
      return;
    }
    const auth = await authenticate(req, res);
    if (auth === false) return;
    if (auth) (req as IncomingMessage & { auth?: AuthInfo }).auth = auth;
    const principal = auth ? auth.clientId : null;
    const sessionHeader = req.headers["mcp-session-id"];
    const sessionId = typeof sessionHeader === "string" ? sessionHeader : undefined;

    if (req.method === "POST") {
      let body: unknown;
      try {
        body = JSON.parse(await readBody(req, maxBodyBytes));
      } catch (error) {
        if (error instanceof BodyTooLargeError) {
          app.engine.observer.limitRejected("body_bytes");
          sendRpcError(res, 413, -32600, `Invalid Request: body larger than ${maxBodyBytes} bytes`);
        } else sendRpcError(res, 400, -32700, "Parse error: the body is not valid JSON");
        return;
      }
      if (shared) {
        await shared.post(req, res, body, auth, principal);
        return;
      }
      if (sessionId === undefined) {
        if (!isInitializeRequest(body)) {
          sendRpcError(res, 400, -32000, "Bad Request: no valid session id; initialize first");
          return;
        }
        const client = principal ?? `peer:${networkOf(currentRequestPeer())}`;
        if (refuseSession(res, client)) return;
        const { id, transport } = await newSession();
        // Set before connecting: the SDK's Protocol chains an existing onclose with its own, which
        // closes the session server (its notification link, in-flight handlers). Assigned after
        // connecting, it would replace that and leave a dead session's server listening forever.
        transport.onclose = () => sessions.delete(id);
        const server = await app.connect(transport, id);
        const session = { id, transport, server, principal, client, openRequests: 0, lastActive: Date.now() };
        sessions.add(session);
        sessions.track(session, res, Date.now);
        await transport.handleRequest(req, res, body);
        return;
      }
      const session = sessions.lookup(sessionId, principal);
      if (!session) {
        // Unknown, closed, or another principal's session: all the same to the caller.
        sendRpcError(res, 404, -32001, "Session not found");
        return;
      }
      sessions.track(session, res, Date.now);
      const plain = plainRequestOf(app, body);
      if (plain) {
        // The SDK transport checks this on its path; ours must too (Streamable HTTP: MUST answer 400).
        const version = req.headers["mcp-protocol-version"];
        if (typeof version === "string" && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
          const supported = SUPPORTED_PROTOCOL_VERSIONS.join(", ");
          sendRpcError(res, 400, -32000, `Bad Request: Unsupported protocol version: ${version} (supported versions: ${supported})`);
          return;
        }
        // A local session's waiting tasks/result carries its task's notifications: only a stream can.
        const where = { id: session.id, clientCapabilities: session.server.getClientCapabilities(), sessionStreamCarriesOwnTasks: false };
        if ((await answerPlain(app, plain, auth, where, req, res)) !== "needs-stream") return;
      }
      await session.transport.handleRequest(req, res, body);
      return;
    }
    if (shared && req.method === "GET") {
      shared.get(req, res, principal);
      return;
    }
    if (shared && req.method === "DELETE") {
      shared.delete(req, res, principal);
      return;
    }
    if (req.method === "GET" || req.method === "DELETE") {
      const session = sessionId === undefined ? null : sessions.lookup(sessionId, principal);
      if (!session) {
        sendRpcError(res, sessionId === undefined ? 400 : 404, -32001, "Session not found");
        return;
      }
      sessions.track(session, res, Date.now);
      await session.transport.handleRequest(req, res);
      return;
    }
    res.writeHead(405, { allow: "GET, POST, DELETE" }).end();
  };

  const server = createServer((req, res) => {
    // One id per HTTP request, in our log lines and the response; also left in the request's
    // headers, where the SDK hands it to MCP handlers (extra.requestInfo).
    const requestId = requestIdOf(req);
    req.headers[REQUEST_ID_HEADER] = requestId;
    res.setHeader(REQUEST_ID_HEADER, requestId);
    // Handlers learn the peer from the request's async context: the SDK hands them headers only.
    withRequestPeer(peerAddress(req, options.trustProxy), () => handle(req, res, requestId)).catch((error: unknown) => {
      if (error instanceof VerifierUnavailableError) {
        // Here rather than in authenticate(): the web view's routes verify the same tokens.
        // -32603: the request may well be valid, the server cannot process it now; the HTTP
        // status and Retry-After say it is temporary. No challenge: the token was not judged.
        logger.warn({ requestId, path: req.url?.split("?")[0], reason: error.message }, "bearer token not verified: the key source is unavailable");
        if (res.headersSent) res.end();
        else sendRpcError(res, 503, -32603, "Service unavailable: bearer tokens cannot be verified right now; retry later", null, { "retry-after": String(error.retryAfterSeconds) });
        return;
      }
      logger.error({ err: error, requestId, method: req.method, path: req.url?.split("?")[0] }, "HTTP request failed");
      if (!res.headersSent) sendRpcError(res, 500, -32603, "Internal error");
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  const url = `http://${shownHost}:${port}${path}`;
  resourceUrl = url;

  return {
    url,
    port,
    sessions,
    server,
    async close() {
      clearInterval(idleSweep);
      shared?.close();
      for (const session of sessions.all()) await session.transport.close().catch(() => {});
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
