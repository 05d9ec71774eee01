import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import type { TaskSupport } from "../tool-definition.js";
import type { LifecycleEvent, RemoteTaskHandle, RemoteTaskInfo, RemoteTaskProgress } from "./remote-task-info.js";
import type { ElicitHandler, SampleHandler } from "./input-handlers.js";

/**
 * A tool call running as a task on the server, whichever era it was created in. Its status reads
 * as a 2025-11-25 Task (`ttl`, `pollInterval`), the 2026-07-28 `ttlMs`/`pollIntervalMs` mapped in,
 * so code following a task never asks which wire it came over.
 */
export type ToolTask = RemoteTaskHandle<CallToolResult>;

/** What a call sent: a plain result, or the task the server made of it. */
export type EraCall = { kind: "result"; result: CallToolResult } | { kind: "task"; created: RemoteTaskInfo; immediateResponse?: string };

export interface EraCallOptions {
  task?: boolean;
  ttl?: number;
  idempotencyKey?: string;
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  signal?: AbortSignal;
}

/**
 * What a revision's requestor can do, so callers (the CLI, TaskClient) test a capability instead
 * of a revision string.
 */
export interface EraFeatures {
  /** The server lists the tasks a requestor may see (2025-11-25 `tasks/list`; 2026-07-28 has none, X-LEG-1). */
  readonly canList: boolean;
  /** A call can ask for its task's ttl (2025-11-25 `params.task.ttl`; 2026-07-28: the server's default, X-CAP-4). */
  readonly sendsTtl: boolean;
  /** Requests run in a session opened by `initialize` (2025-11-25); else each stands alone (2026-07-28). */
  readonly sessions: boolean;
  /** The server, not the client, decides per call whether it becomes a task (2026-07-28, X-CAP-4). */
  readonly serverDecidesTasks: boolean;
  /** A task's result comes on a blocking stream that also carries its questions (2025-11-25 `tasks/result`); else it is polled. */
  readonly streamsResult: boolean;
  /** The server can host client-side tasks and send the requestor questions outside a call (2025-11-25). */
  readonly clientHostedTasks: boolean;
}

/** How a handle reports to its TaskClient. */
export interface HandleOptions {
  initial?: RemoteTaskInfo;
  /** Answer the task's questions as they come (off for a one-off look, `tasks get`). */
  answerInput: boolean;
  onLifecycle: (event: LifecycleEvent) => void;
  defaultPollIntervalMs?: number;
  /** The task's progress reports, where the era reads them from the task (2026-07-28 `tasks/get`). */
  onProgress?: (progress: RemoteTaskProgress) => void;
}

/**
 * The seam between TaskClient and a protocol revision's requestor wire, as `src/mcp/era.ts` is on
 * the server side: everything a revision's wire knows (its methods, shapes, how input travels)
 * lives in one folder implementing this (`rev2025-11-25/`, `rev2026-07-28/`); TaskClient keeps the
 * journal, the log and the handles, and never asks which era it talks.
 */
export interface RequestorEra {
  readonly revision: string;
  readonly features: EraFeatures;
  /** Whether the server runs tool calls as tasks at all (2025-11-25: it declared `tasks.requests.tools.call`, T-CAP-3; an era where the server decides per call: true). */
  readonly serverSupportsToolTasks: boolean;
  /** A tool's task support as the server lists it (cached); null when unknown or the server does not say. */
  taskSupportOf(tool: string, options?: { refresh?: boolean }): Promise<TaskSupport | null>;
  /** Every page of `tools/list`. */
  listTools(): Promise<Tool[]>;
  /** Whether the server declared that it honours idempotency keys (SEP-3182 `capabilities.tools.idempotency`). */
  honoursKeys(): Promise<boolean>;
  /** Whether {@link callTool} with these options would create a task (as far as the requestor can tell before sending). */
  createsTask(name: string, options: EraCallOptions): Promise<boolean>;
  /** Calls a tool; the era decides (2025: the client, T-TOOL) or learns (2026: the server, X-CAP-4) whether it is a task. */
  callTool(name: string, args: Record<string, unknown>, options: EraCallOptions): Promise<EraCall>;
  /** A handle on a task by id. */
  task(taskId: string, options: HandleOptions): ToolTask;
  /** Every task the server lets this client see; refused where the era has no listing (2026: X-LEG-1). */
  list(options: { signal?: AbortSignal }): AsyncGenerator<RemoteTaskInfo, void, undefined>;
  /** Stops what the era runs in the background (not the SDK client's connection). */
  close(): Promise<void>;
}

/** Who a requestor is and how it reaches a server over HTTP, in any era. */
export interface HttpConnectionOptions {
  /** HTTP bearer token. */
  token?: string;
  /** Who the requestor is (the `clientInfo` of its initialize or of each request's envelope). */
  clientInfo?: { name: string; version: string };
  /** Extra HTTP headers on every request. */
  headers?: Record<string, string>;
  /** Default: the global fetch. */
  fetch?: typeof fetch;
}

/** The application's answers to a server's questions (the same handlers in every era). */
export interface InputHandlers {
  elicit?: ElicitHandler;
  sample?: SampleHandler;
}

/** What every requestor era folder registers. */
interface RequestorEraBase {
  /** The protocol revision, as `--protocol` and `TaskClient.protocol` name it. */
  readonly revision: string;
  readonly features: EraFeatures;
}

/** An era spoken in a session an SDK `Client` opened with `initialize`. */
export interface SessionRequestorDescriptor extends RequestorEraBase {
  readonly kind: "session";
  /**
   * This era's requestor toward an upstream server's tasks over an SDK `Client` (the gateway),
   * the same handle a TaskClient follows its tasks with.
   */
  readonly upstream: UpstreamTasks;
  /** The requestor on `client`; `serverCapabilities` for a session resumed without a new initialize. */
  requestor(client: Client, serverCapabilities: unknown): RequestorEra;
}

/** An era whose requests stand alone on HTTP, each carrying what a session would have held. */
export interface StatelessRequestorDescriptor<C extends object = object> extends RequestorEraBase {
  readonly kind: "stateless";
  /** A connection to the endpoint at `url`; nothing is sent yet. */
  connect(url: URL | string, options: HttpConnectionOptions): C;
  /** Whether `connection` is one of this era's connections. */
  owns(connection: unknown): connection is C;
  requestor(connection: C, handlers: InputHandlers): RequestorEra;
  /**
   * Whether the server behind `connection` speaks this era (asked before any session is opened);
   * rejects when the server cannot be reached or refuses the requestor's credentials.
   */
  speaks(connection: C, signal?: AbortSignal): Promise<boolean>;
}

/** What a requestor era folder registers (`requestor-era-registry.ts`). */
export type RequestorEraDescriptor = SessionRequestorDescriptor | StatelessRequestorDescriptor;

/** Options of the request that creates an upstream task (the SDK's). */
export interface UpstreamRequestOptions {
  signal?: AbortSignal;
  timeout?: number;
  onprogress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

/** How the gateway follows an upstream task through its handle. */
export interface UpstreamTaskOptions {
  /** Longest one look at the task (or its cancel) may go unanswered, ms; the wait for its result is never cut off. */
  requestTimeoutMs: number;
  /** Bounds on the poll interval the upstream suggests, ms. */
  pollIntervalBoundsMs: { min: number; max: number };
  /** The task as a previous handle last saw it (a follow resumed on a new connection). */
  initial?: RemoteTaskInfo | undefined;
}

/**
 * An era's requestor side toward an upstream server's tasks. Following one is the requestor's own
 * task handle (the one TaskClient follows its tasks with), so the gateway keeps only its policy
 * (re-attaching, waiting out refusals) and no loop of its own; errors are the requestor's
 * (RemoteError, ConnectionError), so refusals, losses and timeouts read the same in any era.
 */
export interface UpstreamTasks {
  /**
   * What a requestor that follows its upstream tasks itself declares at initialize, merged into
   * the upstream client's capabilities: an upstream with a fallback for hosts without tasks then
   * serves it tasks, and never lists its task tools to it nor answers its calls in the background.
   */
  readonly clientCapabilities: Readonly<Record<string, object>>;
  /** Whether the upstream runs a tool with this `taskSupport` as a task of its own. */
  runsAsTask(client: Client, support: string | undefined): boolean;
  /** Calls the tool as a task upstream; resolves with the upstream task's id. Its errors are the SDK client's (McpError). */
  create(
    client: Client,
    call: {
      name: string;
      args: Record<string, unknown>;
      ttl?: number | undefined;
      /** Sent as the request's `_meta` (its trace context). */ meta?: Record<string, unknown> | undefined;
    },
    options: UpstreamRequestOptions,
  ): Promise<string>;
  /**
   * A handle on upstream task `taskId` over `client`: it polls, waits for the result (whose
   * stream carries the task's questions, routed by {@link relatedTaskOf}) and cancels. One per
   * connection: a restarted connection needs a new handle.
   */
  task(client: Client, taskId: string, options: UpstreamTaskOptions): RemoteTaskHandle<CallToolResult>;
  /** The upstream task a request from the upstream belongs to (its params' related-task metadata), or null. */
  relatedTaskOf(params: unknown): string | null;
}
