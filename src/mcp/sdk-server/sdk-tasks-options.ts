import type { TaskServerOptions } from "../task-server.js";
import type { SdkToolTasks } from "./sdk-tool.js";

/**
 * Options of {@link withTasks} / {@link createSdkTasks}: TaskServer's engine options, its fallback
 * for hosts without tasks (`backgroundAfterMs`, null for off; `fallbackRequired`; `taskResultWaitMs`;
 * `keepAliveMs`: same defaults, docs/hosts/README.md), and which tools become task-capable.
 */
export interface SdkTasksOptions extends Pick<
  TaskServerOptions,
  | "store"
  | "bus"
  | "logger"
  | "ttl"
  | "pollIntervalMs"
  | "maxArgumentBytes"
  | "pageSize"
  | "maxActivePerOwner"
  | "maxStoredPerOwner"
  | "maxQueuedInputs"
  | "maxResultBytes"
  | "sweepIntervalMs"
  | "rateLimit"
  | "failedLookups"
  | "auditArguments"
  | "bind"
  | "now"
  | "backgroundAfterMs"
  | "fallbackRequired"
  | "taskResultWaitMs"
  | "keepAliveMs"
> {
  /**
   * The McpServer's tools that run as tasks, by name, each registered with `registerTool` (or
   * `tool`) before {@link withTasks} is called. Marked here because SDK 1.x's `registerTool`
   * drops an `execution` field (it always lists `taskSupport: "forbidden"`), and
   * `experimental.tasks.registerToolTask` wants the SDK's own task handlers instead of a callback.
   * Every other tool stays exactly as the SDK runs it.
   */
  tools: Record<string, SdkToolTasks>;
}
