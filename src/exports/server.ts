/**
 * `mcp-tasks` — durable, spec-exact MCP Tasks (protocol revision 2025-11-25), the server side:
 * create a task server, register tools, resources, prompts and completions, connect it to any SDK
 * transport, with the in-process store and bus. This entry holds what a server author writes
 * against; the rest has entries of its own (`mcp-tasks/sqlite`, `/postgres`, `/http`, `/client`,
 * `/testing`, `/demo`), so importing this one loads no native addon, no PostgreSQL driver and no
 * metrics library. The types a store implements (`TaskStore`, `LeaseStore`, `CheckpointStore`,
 * `StreamEventStore`, `EventBus`, …) are in `mcp-tasks/testing` beside the contract suites; a
 * cluster's options (`WorkerPoolOptions`, `LeaseReaperOptions`) in `mcp-tasks/postgres`; the
 * engine's hooks (`EngineObserver`) in `mcp-tasks/http` beside `TaskMetrics`.
 */
export { createTaskServer, TaskServer, type TaskServerOptions } from "../mcp/task-server.js";
export type { AskOptions, GatherContext, ToolContext, ToolDefinition, ToolHandler, TaskSupport } from "../mcp/tool-definition.js";
export type { LogLevel } from "../mcp/logging/log-level.js";
export type { Annotations, ResourceDefinition, ResourcePart, ResourceReadHandler, ResourceReadResult } from "../mcp/features/resources.js";
export type { ResourceTemplateDefinition, TemplateReadHandler, TemplateVariables } from "../mcp/features/resource-templates.js";
export type { PromptArguments, PromptDefinition, PromptHandler, PromptResult } from "../mcp/features/prompts.js";
export type { Completer, CompletionAnswer, CompletionContext } from "../mcp/features/completer.js";
export type { FeatureContext } from "../mcp/features/feature-context.js";
export type { Caller } from "../core/caller.js";
export { CapabilityError } from "../mcp/capability-error.js";
export { TaskError, RpcCode, type TaskErrorKind } from "../core/errors.js";
export { memoryStore } from "../store/memory/memory-store.js";
export { localEventBus } from "../events/local-event-bus.js";
export type { RecoveryPolicy } from "../runtime/recovery-policy.js";
export type { Logger } from "../core/logger.js";
export type { TaskBinding } from "../mcp/owner.js";
export type { TtlPolicy } from "../core/ttl-policy.js";
export type { RateLimit } from "../runtime/limits/rate-limiter.js";
export type { FailedLookupLimit } from "../runtime/limits/failed-lookup-guard.js";
export type { DrainReport } from "../runtime/drain.js";
