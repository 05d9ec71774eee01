import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { Logger } from "../core/logger.js";
import { messageShapeProblem } from "../mcp/json-rpc-message-shape.js";
import type { TaskServer } from "../mcp/task-server.js";
import { bearerAuthentication } from "./auth/challenge.js";
import { protectedResourceMetadataUrl, protectedResourceRoutes } from "./auth/protected-resource.js";
import { VerifierUnavailableError } from "./bearer-auth.js";
import { sendJson, sendRpcError } from "./json-rpc-response.js";
import { LocalSessionEndpoint } from "./local-sessions.js";
import { eventRoutes } from "./event-routes.js";
import { opsRoutes } from "./ops-routes.js";
import { OriginCheck } from "./origin-check.js";
import { peerOf, rememberPeer } from "./request-peer.js";
import { peerAddress } from "./peer-address.js";
import { BodyTooLargeError, readBody } from "./read-body.js";
import { REQUEST_ID_HEADER, requestIdOf } from "./request-id.js";
import { StreamEventLog } from "./resumable-streams.js";
import { RouteTable } from "./route-table.js";
import { HttpFailure } from "./rpc-http-errors.js";
import { IdentifiedResponse } from "./identified-response.js";
import type { SessionEndpoint } from "./session-endpoint.js";
import { SessionRegistry } from "./session-registry.js";
import { SharedSessionEndpoint } from "./shared-sessions/shared-endpoint.js";
import { StatelessEndpoint } from "./stateless-endpoint.js";
import { DEFAULT_MAX_BODY_BYTES, type HttpHandle, type HttpOptions } from "./http-options.js";
import { serverTimeouts } from "./http-timeouts.js";
import { DEFAULT_DRAIN_GRACE_MS } from "../runtime/drain.js";
import { stopOnSignals } from "../mcp/stop-on-signals.js";

export { DEFAULT_MAX_SESSIONS, DEFAULT_MAX_SESSIONS_PER_CLIENT } from "./local-sessions.js";

export type { HttpHandle, HttpOptions } from "./http-options.js";

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
  const timeouts = serverTimeouts(options);
  await app.start();
  const logger = app.engine.logger;
  const host = options.host ?? "127.0.0.1";
  const path = options.path ?? "/mcp";
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  let port = options.port ?? 3000;
  // Known once listening (the default resource is the listen URL, and port 0 picks the port then).
  let resourceUrl = "";
  const resourceOf = (): string => options.protectedResource?.resource ?? resourceUrl;
  const authenticate = bearerAuthentication(
    options.verifier,
    options.protectedResource && (() => protectedResourceMetadataUrl(resourceOf())),
  );

  // Host and Origin, checked once for every path before any route (DNS-rebinding protection, T-HTTP-1).
  const origins = new OriginCheck(host, () => port, options.allowedOrigins);
  const events = options.resumableStreams === false ? undefined : StreamEventLog.of(app.engine.inspect, logger, options.resumableStreams);
  const local =
    (options.sessions ?? (app.engine.clustered ? "shared" : "local")) === "local"
      ? new LocalSessionEndpoint(app, { ...sessionLimits(options), ...(events && { events }) })
      : null;
  const endpoint: SessionEndpoint = local ?? (await SharedSessionEndpoint.create(app, events ? { events } : {}));
  const stateless = new StatelessEndpoint(app);

  const routes = new RouteTable([
    ...opsRoutes(app, options.metricsToken === undefined ? {} : { metricsToken: options.metricsToken }),
    ...(options.protectedResource ? protectedResourceRoutes(path, resourceOf, options.protectedResource) : []),
    ...eventRoutes(app, { authenticate, maxBodyBytes, ...(options.adminTokens && { adminTokens: options.adminTokens }) }),
    ...(options.routes ?? []),
  ]);

  const handOn = (answering: Promise<void> | void, req: IncomingMessage, res: ServerResponse, requestId: string): void => {
    if (answering instanceof Promise) answering.catch((error: unknown) => answerFailure(error, req, res, requestId, logger));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> => {
    const refused = origins.refusal(req);
    if (refused) {
      logger.warn(
        { requestId, path: req.url?.split("?")[0], host: req.headers.host, origin: req.headers.origin },
        "request refused: its Host or Origin is not allowed (DNS-rebinding protection)",
      );
      sendRpcError(res, HttpFailure[refused.failure], refused.message);
      return;
    }
    // The endpoint's own path, as every MCP request spells it, needs no URL parsed.
    if (req.url !== path) {
      const url = new URL(req.url ?? "/", "http://localhost");
      if (url.pathname !== path) {
        if (await routes.dispatch(req, res, { url, requestId, peer: peerOf(req), logger })) return;
        sendJson(res, HttpFailure.routeNotFound.status, { error: "not found" });
        return;
      }
    }
    const auth = await authenticate(req, res);
    if (auth === false) return;
    if (auth) (req as IncomingMessage & { auth?: AuthInfo }).auth = auth;
    const principal = auth ? auth.clientId : null;
    if (req.method === "POST") {
      const body = await readJsonBody(req, res, maxBodyBytes, app);
      if (body === NO_BODY) return;
      if (Array.isArray(body)) {
        // Batches left the protocol in 2025-06-18 (and the 2026 era never had them): one error
        // for the whole body, on every path, before any message of it is looked at.
        sendRpcError(res, HttpFailure.batch, "Invalid Request: JSON-RPC batches are not supported; send one message per request");
        return;
      }
      // A stateless era's request (2026-07-28) needs no session: asked first, before any lookup.
      const era = stateless.claim(req, body);
      // Handed on with its own failure handler, neither awaited nor returned (here and below):
      // neither this function's frame nor its promise, resolved with the endpoint's, is kept for
      // as long as a request waits (a blocked tasks/result, a subscription: thousands at once).
      if (era) handOn(stateless.post(era, req, res, body, auth), req, res, requestId);
      else {
        // Valid JSON that is no JSON-RPC message of MCP is an Invalid Request, said here once for
        // every session path: the SDK's transport would call it a Parse error.
        const problem = messageShapeProblem(body);
        if (problem) sendRpcError(res, HttpFailure.invalidRequest, problem.message, { id: problem.id });
        else handOn(endpoint.post(req, res, body, auth, principal), req, res, requestId);
      }
    } else if (req.method === "GET") handOn(endpoint.get(req, res, principal), req, res, requestId);
    else if (req.method === "DELETE") await endpoint.delete(req, res, principal);
    else res.writeHead(HttpFailure.methodNotAllowed.status, { allow: "GET, POST, DELETE" }).end();
  };

  const server = createServer({ ServerResponse: IdentifiedResponse, ...timeouts }, (req, res) => {
    // One id per HTTP request, in our log lines and the response's head; also left in the
    // request's headers, where the SDK hands it to MCP handlers (extra.requestInfo).
    const requestId = requestIdOf(req);
    req.headers[REQUEST_ID_HEADER] = requestId;
    res.requestId = requestId;
    rememberPeer(req, peerAddress(req, options.trustProxy));
    handle(req, res, requestId).catch((error: unknown) => answerFailure(error, req, res, requestId, logger));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  const url = `http://${shownHost}:${port}${path}`;
  resourceUrl = url;

  const served: HttpHandle = {
    url,
    port,
    sessions: local?.sessions ?? new SessionRegistry(),
    server,
    async close() {
      signals?.remove();
      await endpoint.close();
      events?.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  // The drain of `serve` on SIGINT/SIGTERM (see HttpOptions.handleSignals).
  const signals =
    options.handleSignals === false
      ? null
      : stopOnSignals(app, {
          drainTimeoutMs: options.drainTimeoutMs ?? DEFAULT_DRAIN_GRACE_MS,
          stopAccepting: () => server.close(),
          closeAfter: () => served.close(),
        });
  return served;
}

function sessionLimits(options: HttpOptions): { sessionIdleMs?: number; maxSessions?: number; maxSessionsPerClient?: number } {
  return {
    ...(options.sessionIdleMs !== undefined && { sessionIdleMs: options.sessionIdleMs }),
    ...(options.maxSessions !== undefined && { maxSessions: options.maxSessions }),
    ...(options.maxSessionsPerClient !== undefined && { maxSessionsPerClient: options.maxSessionsPerClient }),
  };
}

const NO_BODY = Symbol("no body");

/** The POST body parsed as JSON, or {@link NO_BODY} once a 413 or a parse error has been answered. */
async function readJsonBody(req: IncomingMessage, res: ServerResponse, maxBodyBytes: number, app: TaskServer): Promise<unknown> {
  try {
    return JSON.parse(await readBody(req, maxBodyBytes));
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      app.engine.observer.limitRejected("body_bytes");
      sendRpcError(res, HttpFailure.bodyTooLarge, `Invalid Request: body larger than ${maxBodyBytes} bytes`);
    } else sendRpcError(res, HttpFailure.parseError, "Parse error: the body is not valid JSON");
    return NO_BODY;
  }
}

/** The one answer to whatever a request's handling threw: nothing of it reaches the client but a fixed message. */
function answerFailure(error: unknown, req: IncomingMessage, res: ServerResponse, requestId: string, logger: Logger): void {
  const path = req.url?.split("?")[0];
  if (error instanceof VerifierUnavailableError) {
    // Here rather than in authentication: the web view's routes verify the same tokens.
    // -32603: the request may well be valid, the server cannot process it now; the HTTP
    // status and Retry-After say it is temporary. No challenge: the token was not judged.
    logger.warn({ requestId, path, reason: error.message }, "bearer token not verified: the key source is unavailable");
    if (res.headersSent) res.end();
    else
      sendRpcError(res, HttpFailure.verifierUnavailable, "Service unavailable: bearer tokens cannot be verified right now; retry later", {
        headers: { "retry-after": String(error.retryAfterSeconds) },
      });
    return;
  }
  logger.error({ err: error, requestId, method: req.method, path }, "HTTP request failed");
  if (!res.headersSent) sendRpcError(res, HttpFailure.internal, "Internal error");
  else res.end();
}
