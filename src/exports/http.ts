/**
 * `mcp-tasks/http` — serving a TaskServer over Streamable HTTP: bearer and JWT verifiers, the
 * protected-resource metadata, extra routes such as the web view, and Prometheus metrics
 * (pass `metrics: new TaskMetrics()` to createTaskServer and /metrics serves them).
 */
export { serveHttp, type HttpOptions, type HttpHandle } from "../http/http-server.js";
export {
  staticTokenVerifier,
  ADMIN_SCOPE,
  ScopeRequiredError,
  VerifierUnavailableError,
  type BearerVerifier,
} from "../http/bearer-auth.js";
export { jwtVerifier, JwtKeyError, type JwtVerifierOptions, type JwtKeySource } from "../http/auth/jwt-verifier.js";
export { protectedResourceMetadataUrl, type ProtectedResourceOptions } from "../http/auth/protected-resource.js";
export { loadTokenFile, type TokenGrant } from "../http/token-file.js";
export type { HttpRoute, RouteContext, RouteHandler } from "../http/route-table.js";
export type { TrustProxy } from "../http/peer-address.js";
export { webRoutes, type WebOptions } from "../web/web-routes.js";
export type { Redaction } from "../web/task-view.js";
export { TaskMetrics } from "../metrics/task-metrics.js";
export type { ResumableStreamOptions } from "../http/resumable-streams.js";
export type { HttpTimeouts } from "../http/http-timeouts.js";
export type { FeedOptions } from "../web/task-feed.js";
export type { EngineObserver, LimitName } from "../runtime/engine-observer.js";
export type { EmitReport } from "../runtime/engine/task-signals.js";
export type { DeliveryOutcome, WebhookObserver } from "../runtime/webhooks/webhook-sender.js";
