import type { Logger } from "../core/logger.js";
import type { TtlPolicy } from "../core/ttl-policy.js";
import type { EventBus } from "../events/event-bus.js";
import type { TaskStore } from "../store/task-store.js";

export type { ElicitHandler, InputRequestInfo, SampleHandler } from "../mcp/requestor/input-handlers.js";
import type { ElicitHandler, SampleHandler } from "../mcp/requestor/input-handlers.js";

/** Options of client-hosted tasks (the client as receiver, T-CAP-2 client keys). */
export interface ClientTaskHosting {
  /** Default: in memory. */
  store?: TaskStore;
  bus?: EventBus;
  logger?: Logger;
  ttl?: Partial<TtlPolicy>;
  pollIntervalMs?: number | null;
  sweepIntervalMs?: number;
}

export interface ClientReceiverOptions {
  elicit?: ElicitHandler;
  sample?: SampleHandler;
  /**
   * Execute `sampling/createMessage` / `elicitation/create` as tasks when the server asks
   * (declares `tasks.requests.…`, `tasks.list`, `tasks.cancel`). Same engine as the server side:
   * store, lifecycle, TTL, cancel.
   */
  hostTasks?: boolean | ClientTaskHosting;
}
