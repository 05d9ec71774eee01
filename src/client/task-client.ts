import { randomUUID } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { inClientSpan } from "../mcp/tracing/client-span.js";
import { toolCallOutcome } from "../mcp/tracing/tool-call-outcome.js";
import { NotificationsBeforeClose } from "./notifications-before-close.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { TaskError } from "../core/errors.js";
import { ClientReceiver, type ClientReceiverOptions } from "./receiver.js";
import type { TaskSupport } from "../mcp/tool-definition.js";
import type { LifecycleEvent, RemoteTaskInfo, RemoteTaskProgress } from "../mcp/requestor/remote-task-info.js";
import { silentLogger, type Logger } from "../core/logger.js";
import type { TaskJournal } from "./task-journal.js";
import { chooseEra, type EraCache } from "./era-choice.js";
import { applyingSchemaDefaults } from "./elicitation-defaults.js";
import type { EraCall, EraFeatures, HttpConnectionOptions, RequestorEra, ToolTask } from "../mcp/requestor/requestor-era.js";
import { isConnectionDrop } from "../mcp/connection-cause.js";
import {
  SESSION_REQUESTOR,
  STATELESS_REQUESTORS,
  statelessEraOf,
  type ProtocolRevision,
  type StatelessEraConnection,
} from "../mcp/requestor/requestor-eras.js";
import { pause } from "../core/pause.js";

export type { EraFeatures, ToolTask } from "../mcp/requestor/requestor-era.js";

/**
 * Waits before each re-send of a creation whose connection dropped (see {@link CallToolOptions.idempotencyKey}):
 * long enough for a restarting server or a balancer to come back, short enough for a waiting caller.
 */
const RESEND_DELAYS_MS = [250, 1000, 3000];

/** What {@link TaskClient.callTool} started: a task to follow, or (a plain call) its result. */
export type ToolCall =
  | { kind: "task"; task: ToolTask; /** T-NEW-3, for a host to hand its model meanwhile. */ immediateResponse?: string }
  | { kind: "result"; result: CallToolResult };

/** Options of {@link TaskClient.callTool}: task or plain call, ttl, idempotency key, progress, abort signal. */
export interface CallToolOptions {
  /**
   * 2025-11-25: `true` as a task (refused locally if the server or tool does not allow it);
   * `false` as a plain call (refused if the tool requires a task); omitted: a task exactly when
   * required. 2026-07-28 (the server decides, X-CAP-4): `false` does not declare the tasks
   * extension on the call, so an optional tool runs plainly (X-CAP-10) and a required one is
   * refused (-32021); otherwise the extension is declared.
   */
  task?: boolean;
  /** Requested ttl of the task, ms (T-NEW-1; 2025-11-25 only: under 2026-07-28 the server's default applies). */
  ttl?: number;
  /** Progress notifications of the call; for a task they keep coming for its whole life (T-PROG-1). */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
  /** Gives up a plain call (notifications/cancelled) or the creation of a task. */
  signal?: AbortSignal;
  /**
   * Names the operation (SEP-3182, `params.idempotencyKey`, 1–255 characters): sending the call
   * again with the same key — after a lost answer, from another process — gets the same task, or
   * the recorded result, and the tool does not run twice. Honoured by servers that declare
   * `capabilities.tools.idempotency`.
   *
   * A creation of a task whose connection is refused, reset or dropped before the answer is sent
   * again (up to 3 times, after 0.25, 1 and 3 s) under the same key — this one, or a random one
   * the client makes up for the call when none is given — so the server creates one task however
   * many times it arrived. Only to a server that declares `capabilities.tools.idempotency`;
   * elsewhere a re-send could run the work twice, and the error is the caller's.
   */
  idempotencyKey?: string;
}

/** Options of a {@link TaskClient}: its logger and journal, and what it answers for the server (elicitation, sampling, hosted tasks). */
export interface TaskClientOptions extends ClientReceiverOptions {
  /** Requestor lifecycle log (created, status, result, cancel — T-SEC-5). pino fits. */
  logger?: Logger;
  /** Records the tasks this client creates and what it does with them, e.g. {@link fileJournal}. */
  journal?: TaskJournal;
  /** Written into journal entries: which receiver this client talks to. */
  target?: string;
  /** The server's capabilities, when the connection was resumed without a new initialize. */
  serverCapabilities?: unknown;
  /** Poll interval when a task suggests none. Default 1000 ms. */
  defaultPollIntervalMs?: number;
  /**
   * Complete an accepted elicitation with the requested schema's defaults for the fields the
   * `elicit` handler left out (SEP-1034, elicitation-defaults.ts). Default true; false
   * sends the handler's content exactly as returned.
   */
  applySchemaDefaults?: boolean;
}

/** Options of {@link TaskClient.connect}. */
export interface ConnectOptions extends TaskClientOptions, HttpConnectionOptions {
  /** Speak this revision without asking (`server/discover` is skipped). */
  protocol?: ProtocolRevision;
  /** Remembers each target's era, so a 2025-only server is not asked `server/discover` on every connect. */
  eraCache?: EraCache;
}

/**
 * The requestor side of MCP Tasks, in either protocol era: calls tools (as tasks where the era
 * allows it), follows, waits for and cancels tasks, lists them (2025-11-25), and re-attaches to
 * them by id after a restart. Routes the server's elicitation/sampling requests to the
 * application's handlers — on the `tasks/result` stream (2025-11-25), or as `inputRequests`
 * answered with `tasks/update` and MRTR rounds (2026-07-28).
 *
 * - `new TaskClient(client)`: 2025-11-25 on an SDK `Client` (create it before `client.connect()`:
 *   it declares the client's capabilities); can host the server's requests as client-side tasks.
 * - `await TaskClient.connect(url, { protocol: "2026-07-28" })`: 2026-07-28 with the tasks extension.
 * - `await TaskClient.connect(url)`: asks `server/discover` first and speaks 2026-07-28 where the
 *   server does, else initializes a 2025-11-25 session (`protocol` forces one; `eraCache` spares the
 *   question on later connects).
 *
 * The wire of each era lives behind `RequestorEra` (`src/mcp/requestor/rev…/`).
 */
export class TaskClient {
  /** The protocol revision this client speaks. */
  readonly protocol: ProtocolRevision;
  private readonly era: RequestorEra;
  private readonly sdkClient: Client | null;
  private readonly sdkReceiver: ClientReceiver | null;
  private readonly options: TaskClientOptions;
  private readonly logger: Logger;
  private readonly handles = new Set<ToolTask>();
  private ownsClient = false;

  constructor(client: Client | StatelessEraConnection, given: TaskClientOptions = {}) {
    // One place for both eras: the handler every server question reaches (ClientReceiver, client-hosted tasks, inputRequests).
    const options =
      given.elicit && given.applySchemaDefaults !== false ? { ...given, elicit: applyingSchemaDefaults(given.elicit) } : given;
    this.options = options;
    this.logger = options.logger ?? silentLogger;
    // Asked of the stateless eras first: an SDK Client from another copy of the SDK fails instanceof.
    const stateless = statelessEraOf(client);
    if (stateless) {
      this.sdkClient = null;
      this.sdkReceiver = null;
      this.era = stateless.requestor(client as StatelessEraConnection, options);
      this.protocol = stateless.revision;
    } else {
      const sdk = client as Client;
      this.sdkClient = sdk;
      // Before the era's requestor: it adds its own declarations to the receiver's.
      this.sdkReceiver = new ClientReceiver(sdk, options);
      this.era = SESSION_REQUESTOR.requestor(sdk, options.serverCapabilities);
      this.protocol = SESSION_REQUESTOR.revision;
    }
  }

  /**
   * A TaskClient on a Streamable HTTP endpoint, in the era it speaks (see the class). Under
   * 2025-11-25 a new SDK Client is connected (closed again by {@link close}).
   */
  static async connect(url: string | URL, options: ConnectOptions = {}): Promise<TaskClient> {
    const revision = await chooseEra(url, options, {
      ...(options.protocol !== undefined && { forced: options.protocol }),
      ...(options.eraCache !== undefined && { cache: options.eraCache }),
    });
    const stateless = STATELESS_REQUESTORS.find((era) => era.revision === revision);
    if (stateless) return new TaskClient(stateless.connect(url, options), options);
    const client = new Client(options.clientInfo ?? { name: "mcp-tasks", version: "0.1.0" });
    const tasks = new TaskClient(client, options);
    const headers = { ...options.headers, ...(options.token !== undefined && { Authorization: `Bearer ${options.token}` }) };
    await client.connect(
      new NotificationsBeforeClose(
        new StreamableHTTPClientTransport(new URL(url), {
          requestInit: { headers },
          ...(options.fetch !== undefined && { fetch: options.fetch }),
        }),
      ),
    );
    tasks.ownsClient = true;
    return tasks;
  }

  /** The SDK client of a 2025-11-25 TaskClient; a 2026-07-28 one has none (stateless requests). */
  get client(): Client {
    if (!this.sdkClient) throw new TaskError("method_not_found", "A 2026-07-28 TaskClient has no SDK Client: it sends stateless requests");
    return this.sdkClient;
  }

  /** Answers the server's requests (and hosts client-side tasks): 2025-11-25 only. */
  get receiver(): ClientReceiver {
    if (!this.sdkReceiver)
      throw new TaskError("method_not_found", "A 2026-07-28 TaskClient has no receiver: the server's questions come as inputRequests");
    return this.sdkReceiver;
  }

  /** What this client's era can do (list tasks, send a ttl, …): test these rather than {@link protocol}. */
  get features(): EraFeatures {
    return this.era.features;
  }

  /** Whether the server declared `tasks.requests.tools.call` (T-CAP-3, T-TOOL-1); 2026-07-28: true (the server decides per call). */
  get serverSupportsToolTasks(): boolean {
    return this.era.serverSupportsToolTasks;
  }

  /** Every page of `tools/list`. */
  listTools(): Promise<Tool[]> {
    return this.era.listTools();
  }

  /**
   * A tool's `execution.taskSupport` from `tools/list` (cached; "forbidden" when absent, T-TOOL-2).
   * Null for an unknown tool; under 2026-07-28, where the extension lists none (X-LEG-6), what our
   * server lists in its own `_meta` key, null from other servers.
   */
  async taskSupportOf(tool: string, options: { refresh?: boolean } = {}): Promise<TaskSupport | null> {
    return this.era.taskSupportOf(tool, options);
  }

  /**
   * Calls a tool: as a task where the era and the caller want it (see
   * {@link CallToolOptions.task}), else plainly. A task is returned at once as a handle; a plain
   * call resolves with its result. Rejects with a RemoteError when the server refuses the call.
   */
  async callTool(name: string, args: Record<string, unknown> = {}, options: CallToolOptions = {}): Promise<ToolCall> {
    const call = await inClientSpan(
      "tools/call",
      name,
      () => this.send(name, args, options),
      {},
      (sent) => (sent.kind === "result" ? toolCallOutcome(sent.result) : undefined),
    );
    if (call.kind === "result") return call;
    const { created } = call;
    this.record({ type: "created", taskId: created.taskId, name, status: created.status, ttl: created.ttl });
    const handle = this.handle(created.taskId, created, true, options.onProgress);
    return { kind: "task", task: handle, ...(call.immediateResponse !== undefined && { immediateResponse: call.immediateResponse }) };
  }

  /**
   * The call, sent again under one key when the creation of a task lost its connection: the
   * request may have been stored before the connection went, and only the key makes its re-send
   * find that task instead of starting the work again.
   */
  private async send(name: string, args: Record<string, unknown>, options: CallToolOptions): Promise<EraCall> {
    const key = await this.resendKey(name, options);
    if (key === null) return this.era.callTool(name, args, options);
    const keyed = { ...options, idempotencyKey: key };
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.era.callTool(name, args, keyed);
      } catch (error) {
        const wait = RESEND_DELAYS_MS[attempt];
        if (wait === undefined || !isConnectionDrop(error) || options.signal?.aborted) throw error;
        this.logger.warn(
          { requestor: "resend", name, attempt: attempt + 1, err: error },
          "the connection dropped before the answer: sending the creation again under its idempotency key",
        );
        await pause(wait, options.signal);
      }
    }
  }

  /** The key a creation is re-sent under, or null when it may not be re-sent (not a task creation, or a server that ignores keys). */
  private async resendKey(name: string, options: CallToolOptions): Promise<string | null> {
    if (!(await this.era.createsTask(name, options).catch(() => false))) return null;
    if (!(await this.era.honoursKeys().catch(() => false))) return null;
    return options.idempotencyKey ?? randomUUID();
  }

  /** A handle on a task by id, without checking it exists (see {@link resume}). */
  task(taskId: string): ToolTask {
    return this.handle(taskId);
  }

  /**
   * Re-attaches to a task after the requestor restarted or reconnected (a new session): checks it
   * with `tasks/get` and returns its handle. Rejects with a RemoteError (-32602) when the server
   * does not know it (never existed, expired, another owner's).
   */
  async resume(taskId: string, options: { onProgress?: (progress: RemoteTaskProgress) => void } = {}): Promise<ToolTask> {
    const handle = this.handle(taskId, undefined, true, options.onProgress);
    try {
      await handle.status();
    } catch (error) {
      this.forget(handle);
      throw error;
    }
    this.record({ type: "resumed", taskId });
    return handle;
  }

  /** `tasks/get`. */
  async get(taskId: string): Promise<RemoteTaskInfo> {
    const handle = this.handle(taskId, undefined, false);
    try {
      return await handle.status();
    } finally {
      this.forget(handle);
    }
  }

  /**
   * `tasks/cancel`: the cancelled task (T-CANCEL-5: fetch what you need first — the server may
   * drop a cancelled task). 2026-07-28 answers an ack, also for a terminal task (X-CONF-1): the
   * task is read back with `tasks/get`.
   */
  async cancel(taskId: string): Promise<RemoteTaskInfo> {
    const handle = this.handle(taskId, undefined, false);
    try {
      return await handle.cancel();
    } finally {
      this.forget(handle);
    }
  }

  /** Every task the server lets this client see, walking `tasks/list` pages (T-LIST-3). 2026-07-28 has none: -32601. */
  list(options: { signal?: AbortSignal } = {}): AsyncGenerator<RemoteTaskInfo, void, undefined> {
    return this.era.list(options);
  }

  /** Disposes every handle and stops the client-hosted task engine. Closes the SDK client only if {@link connect} opened it. */
  async close(): Promise<void> {
    for (const handle of [...this.handles]) handle.dispose();
    this.handles.clear();
    await this.era.close();
    await this.sdkReceiver?.close();
    if (this.ownsClient) await this.sdkClient?.close().catch(() => {});
  }

  private handle(
    taskId: string,
    initial?: RemoteTaskInfo,
    answerInput = true,
    onProgress?: (progress: RemoteTaskProgress) => void,
  ): ToolTask {
    const handle: ToolTask = this.era.task(taskId, {
      answerInput,
      ...(onProgress !== undefined && { onProgress }),
      onLifecycle: (event) => {
        this.record(event);
        // Once the outcome is in, close() has nothing left to stop on this handle.
        if (event.type === "result") this.handles.delete(handle);
      },
      ...(initial !== undefined && { initial }),
      ...(this.options.defaultPollIntervalMs !== undefined && { defaultPollIntervalMs: this.options.defaultPollIntervalMs }),
    });
    this.handles.add(handle);
    return handle;
  }

  private forget(handle: ToolTask): void {
    handle.dispose();
    this.handles.delete(handle);
  }

  /** T-SEC-5 (requestor): log the lifecycle event and journal it, with the era it happened in. */
  private record(
    event:
      | LifecycleEvent
      | { type: "created"; taskId: string; name: string; status: string; ttl: number | null }
      | { type: "resumed"; taskId: string },
  ): void {
    const { type, ...fields } = event;
    this.logger.info({ requestor: type, ...fields }, `task ${type}`);
    const journal = this.options.journal;
    if (!journal) return;
    const entry = {
      at: new Date().toISOString(),
      op: type,
      ...fields,
      ...(this.options.target !== undefined && { target: this.options.target }),
      protocol: this.protocol,
    };
    journal.record(entry).catch((error: unknown) => this.logger.warn({ err: error }, "could not write the task journal"));
  }
}
