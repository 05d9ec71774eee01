/**
 * `mcp-tasks/client` — the requestor: a TaskClient on an SDK Client (2025-11-25), or
 * `TaskClient.connect(url)` to let `server/discover` pick the era (`protocol` forces one); it calls
 * tools as tasks, resumes them by id, hosts the server's sampling/elicitation as tasks; its
 * journals and errors. Every name here is era-neutral: an era's own classes stay in its folder
 * (src/mcp/requestor/rev…), so removing an era changes nothing a user imports.
 * Loads no native addon, no PostgreSQL driver, no metrics or JWT library (test/package checks).
 */
export {
  TaskClient,
  type TaskClientOptions,
  type ConnectOptions,
  type CallToolOptions,
  type ToolCall,
  type ToolTask,
} from "../client/task-client.js";
export type { HttpConnectionOptions } from "../mcp/requestor/requestor-era.js";
export { memoryEraCache, ERA_CACHE_MS, type EraCache, type CachedEra } from "../client/era-choice.js";
export { PROTOCOL_REVISIONS, type ProtocolRevision } from "../mcp/requestor/requestor-eras.js";
export { fileJournal, memoryJournal, type TaskJournal, type JournalEntry } from "../client/task-journal.js";
export type { ClientTaskHosting, ElicitHandler, SampleHandler, InputRequestInfo } from "../client/receiver-options.js";
export type {
  TaskOutcome,
  LifecycleEvent,
  RemoteTaskInfo,
  RemoteTaskStatus,
  RemoteTaskProgress,
  RemoteTaskHandle,
} from "../mcp/requestor/remote-task-info.js";
export type { EraFeatures } from "../mcp/requestor/requestor-era.js";
export { RemoteError, TaskCancelledError, ConnectionError, InputRefusedError } from "../mcp/requestor/requestor-errors.js";
export type { TaskErrorKind } from "../core/errors.js";
export { TaskError, RpcCode } from "../core/errors.js";
/** Receivers of this server's webhooks: checks a delivery's Standard Webhooks signature and returns its event (docs/webhooks.md). */
export { verifySignature as verifyWebhook, WebhookSignatureError } from "../runtime/webhooks/signature.js";
