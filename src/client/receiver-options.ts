import type {
  CreateMessageRequestParams,
  CreateMessageResult,
  ElicitRequestParams,
  ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../core/logger.js";
import type { TtlPolicy } from "../core/ttl-policy.js";
import type { EventBus } from "../events/event-bus.js";
import type { TaskStore } from "../store/task-store.js";

/** What an application's handler of a server request learns besides the params. */
export interface InputRequestInfo {
  /** The requestor-side task this request belongs to (related-task `_meta`, T-META-1), else null. */
  relatedTaskId: string | null;
  /** The client-hosted task running this request (the server sent it task-augmented), else null. */
  taskId: string | null;
  /** Aborts when the server withdraws the request or cancels the client-hosted task. */
  signal: AbortSignal;
}

/** Answers `elicitation/create`. */
export type ElicitHandler = (params: ElicitRequestParams, info: InputRequestInfo) => Promise<ElicitResult>;
/** Answers `sampling/createMessage`. */
export type SampleHandler = (params: CreateMessageRequestParams, info: InputRequestInfo) => Promise<CreateMessageResult>;

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
