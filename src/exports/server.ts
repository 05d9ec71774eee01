/**
 * `mcp-tasks` — durable, spec-exact MCP Tasks (protocol revision 2025-11-25), the server side:
 * create a task server, register tools, connect it to any SDK transport, and the in-process store
 * and bus. Durable stores, HTTP, the requestor, the store contract suite and the demo tools are
 * entries of their own (`mcp-tasks/sqlite`, `/postgres`, `/http`, `/client`, `/testing`, `/demo`),
 * so importing this one loads no native addon, no PostgreSQL driver and no metrics library.
 */
export { createTaskServer, TaskServer, type TaskServerOptions } from "../mcp/task-server.js";
export type { AskOptions, GatherContext, ToolContext, ToolDefinition, ToolHandler, TaskSupport } from "../mcp/tool-definition.js";
export { LOG_LEVELS, type LogLevel } from "../mcp/logging/log-level.js";
export type { Annotations, ResourceDefinition, ResourcePart, ResourceReadHandler, ResourceReadResult } from "../mcp/features/resources.js";
export type { ResourceTemplateDefinition, TemplateReadHandler, TemplateVariables } from "../mcp/features/resource-templates.js";
export type { PromptArguments, PromptDefinition, PromptHandler, PromptResult } from "../mcp/features/prompts.js";
export type { Completer, CompletionAnswer, CompletionContext } from "../mcp/features/completer.js";
export type { FeatureContext } from "../mcp/features/feature-context.js";
export { CapabilityError } from "../mcp/capability-error.js";
export { TaskError, RpcCode } from "../core/errors.js";
export { memoryStore } from "../store/memory/memory-store.js";
export { localEventBus } from "../events/local-event-bus.js";
export type { TaskStore } from "../store/task-store.js";
export type { ClusterStore, LeaseStore } from "../store/lease-store.js";
export type { ClusterView, LeaseInfo, WorkerBeat, WorkerInfo } from "../store/cluster-view.js";
export type { Checkpoint, CheckpointStore } from "../store/checkpoint-store.js";
export type { RecoveryPolicy } from "../runtime/recovery-policy.js";
export type { EventBus } from "../events/event-bus.js";
export type { TaskEvent } from "../events/task-event.js";
export type { Logger } from "../core/logger.js";
export type { NewTask, TaskRecord } from "../core/task.js";
export type { TaskStatus } from "../core/task-status.js";
export { ANONYMOUS_CALLER, type Caller } from "../core/caller.js";
export type { TaskBinding } from "../mcp/owner.js";
export type { TtlPolicy } from "../core/ttl-policy.js";
export type { RateLimit } from "../runtime/limits/rate-limiter.js";
export type { FailedLookupLimit } from "../runtime/limits/failed-lookup-guard.js";
export type { DrainReport } from "../runtime/drain.js";
export type { EngineObserver, LimitName } from "../runtime/engine-observer.js";
export type { TaskErrorKind } from "../core/errors.js";
export type { StreamEventStore, StoredStreamEvent } from "../store/stream-event-store.js";
export type { WorkerPoolOptions } from "../runtime/cluster/worker-pool.js";
export type { LeaseReaperOptions } from "../runtime/cluster/lease-reaper.js";
export { StoreInUseError } from "../store/writer-lock.js";
