/**
 * mcp-tasks — durable, spec-exact MCP Tasks (protocol revision 2025-11-25).
 *
 * The public surface: create a task server, register tools, serve it over stdio (any SDK
 * transport) or Streamable HTTP, and choose where tasks are stored; on the requestor side, a
 * TaskClient on an SDK Client (which can also host the server's sampling/elicitation as tasks).
 */
export { createTaskServer, TaskServer, type TaskServerOptions } from "./mcp/task-server.js";
export type { AskOptions, ToolContext, ToolDefinition, ToolHandler, TaskSupport } from "./mcp/tool-definition.js";
export { CapabilityError } from "./mcp/capability-error.js";
export { serveHttp, type HttpOptions, type HttpHandle } from "./http/http-server.js";
export { staticTokenVerifier, ADMIN_SCOPE, ScopeRequiredError, VerifierUnavailableError, type BearerVerifier } from "./http/bearer-auth.js";
export { jwtVerifier, JwtKeyError, type JwtVerifierOptions, type JwtKeySource } from "./http/auth/jwt-verifier.js";
export { protectedResourceMetadataUrl, type ProtectedResourceOptions } from "./http/auth/protected-resource.js";
export { loadTokenFile, type TokenGrant } from "./http/token-file.js";
export type { HttpRoute, RouteContext, RouteHandler } from "./http/route-table.js";
export { webRoutes, type WebOptions } from "./web/web-routes.js";
export type { Redaction } from "./web/task-view.js";
export { TaskMetrics } from "./metrics/task-metrics.js";
export { memoryStore } from "./store/memory/memory-store.js";
export { sqliteStore } from "./store/sqlite/sqlite-store.js";
export { openStore } from "./store/open-store.js";
export { postgresStore } from "./store/postgres/postgres-store.js";
export type { TaskStore } from "./store/task-store.js";
export type { ClusterStore, LeaseStore } from "./store/lease-store.js";
export { localEventBus } from "./events/local-event-bus.js";
export { pgEventBus, type PgEventBus, type PgEventBusOptions } from "./events/pg-event-bus.js";
export type { EventBus } from "./events/event-bus.js";
export { TaskError, RpcCode } from "./core/errors.js";
export { ANONYMOUS_CALLER, type Caller } from "./core/caller.js";
export type { TaskBinding } from "./mcp/owner.js";
export type { RateLimit } from "./runtime/limits/rate-limiter.js";
export type { FailedLookupLimit } from "./runtime/limits/failed-lookup-guard.js";
export type { TrustProxy } from "./http/peer-address.js";
export type { TaskStatus } from "./core/task-status.js";
export type { TtlPolicy } from "./core/ttl-policy.js";
export { registerDemoTools } from "./demo/demo-tools.js";
export { TaskClient, type TaskClientOptions, type CallToolOptions, type ToolCall, type ToolTask } from "./client/task-client.js";
export { fileJournal, memoryJournal, type TaskJournal, type JournalEntry } from "./client/task-journal.js";
export type { ClientReceiver, ClientTaskHosting, ElicitHandler, SampleHandler, InputRequestInfo } from "./client/receiver.js";
export { RemoteTask, type TaskOutcome, type LifecycleEvent } from "./mcp/rev2025-11-25/requestor/remote-task.js";
export { RemoteError, TaskCancelledError, ConnectionError } from "./mcp/requestor-errors.js";
export type { WireTask as RemoteTaskInfo } from "./mcp/rev2025-11-25/wire.js";
