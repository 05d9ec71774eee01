import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { RECOVERY_POLICIES } from "../runtime/recovery-policy.js";
import type { ClientCapabilities, RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import { localEventBus } from "../events/local-event-bus.js";
import type { TaskMetrics } from "../metrics/task-metrics.js";
import type { EngineOptions } from "../runtime/engine-options.js";
import { TaskEngine, type EmitReport } from "../runtime/task-engine.js";
import { DEFAULT_DRAIN_GRACE_MS, type DrainReport } from "../runtime/drain.js";
import type { StopRegistration } from "../runtime/stop-signals.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { stopOnSignals } from "./stop-on-signals.js";
import type { TaskBinding } from "./owner.js";
import { connectSession } from "./session-server.js";
import { resolveConfig, type TaskServerConfig } from "./task-server-config.js";
import type { TaskProtocolServer } from "./task-protocol-server.js";
import type { EraHost } from "./era.js";
import { SESSION_ERA } from "./eras.js";
import { toolTaskRunner } from "./tool-runner.js";
import { waitSpans } from "./tracing/wait-spans.js";
import { tracedRunner } from "./tracing/execution-span.js";
import { linkingTaskTracing } from "./tracing/task-links.js";
import type { RegisteredTool, ToolDefinition, ToolHandler } from "./tool-definition.js";
import { FeatureRegistry, type ListKind } from "./features/feature-registry.js";
import { ListChangedSessions } from "./features/list-changed.js";
import { registerPrompt, type PromptArguments, type PromptDefinition, type PromptHandler } from "./features/prompts.js";
import { compileTemplate, type ResourceTemplateDefinition, type TemplateReadHandler } from "./features/resource-templates.js";
import type { ResourceDefinition, ResourceReadHandler } from "./features/resources.js";
import { ResourceSubscriptions } from "./features/subscriptions.js";

/**
 * The engine's options a TaskServer takes as they are (each documented in {@link EngineOptions}):
 * stated once there, so a new engine option cannot drift from its TaskServer twin.
 */
type EngineSettings = Pick<
  EngineOptions,
  | "store"
  | "logger"
  | "ttl"
  | "pollIntervalMs"
  | "pageSize"
  | "maxActivePerOwner"
  | "maxStoredPerOwner"
  | "maxQueuedInputs"
  | "maxRunning"
  | "maxRunningPerOwner"
  | "maxQueuedPerOwner"
  | "maxResultBytes"
  | "keepFinishedMs"
  | "rememberExpiredMs"
  | "sweepIntervalMs"
  | "rateLimit"
  | "failedLookups"
  | "auditArguments"
  | "now"
  | "cluster"
  | "webhooks"
> &
  Partial<Pick<EngineOptions, "bus">>;

/** Options of {@link createTaskServer}: the engine's settings, and what the MCP binding adds. */
export interface TaskServerOptions extends EngineSettings {
  name: string;
  version: string;
  /**
   * Prometheus metrics (`new TaskMetrics()` from `mcp-tasks/http`), which `serveHttp` then serves
   * at /metrics. Default: none (and prom-client is never loaded).
   */
  metrics?: TaskMetrics;
  /** Task support; default true. Off: plain MCP server, `params.task` ignored (T-NEW-4). */
  tasks?: boolean;
  /** Largest tools/call `arguments` (JSON bytes); default 1 MiB. */
  maxArgumentBytes?: number;
  /**
   * Without authentication, bind tasks to nobody ("owner", the default: any session reaches a task
   * by id) or to the MCP session that created them ("session": no reconnecting to them). With
   * authentication tasks are always bound to the principal, and `serveHttp` refuses "session".
   */
  bind?: TaskBinding;
  /**
   * Protocol 2026-07-28 (the tasks extension): a call of a `taskSupport: "optional"` tool from a
   * client that declared the extension runs as a task and is answered inline when it finishes
   * within this many ms, else with the task; default 250, 0 to always answer with the task.
   */
  inlineWaitMs?: number;
  /**
   * The fallback for clients that declared no task support, in either era (docs/hosts/README.md): a
   * plain call of an `optional` tool (and a `required` one with `fallbackRequired`) runs as a task;
   * done within this many
   * ms it answers with the tool's result, else with a CallToolResult giving the task id to poll with
   * the `task_*` tools these clients see. Default 10000; null switches the fallback off.
   */
  backgroundAfterMs?: number | null;
  /**
   * Fallback: let clients without task support call `taskSupport: "required"` tools too (they then
   * run as in the fallback). Default false: the spec's refusal (-32601 under 2025-11-25, -32021
   * under 2026-07-28) stands, because a 2025-11-25 client that declares nothing may be task-aware.
   */
  fallbackRequired?: boolean;
  /** Fallback: longest `task_result` waits before answering with the status (default 25000 ms). */
  taskResultWaitMs?: number;
  /** Fallback: keep-alive progress interval of a waiting plain call that sent a progressToken (default 5000 ms). */
  keepAliveMs?: number;
}

/**
 * A durable MCP task server: register tools, then connect transports (or serve HTTP with
 * `serveHttp`). Declaring capabilities, `execution.taskSupport`, and every `tasks/*` handler is
 * automatic.
 */
export class TaskServer {
  readonly config: TaskServerConfig;
  readonly engine: TaskEngine;
  /** Prometheus metrics of this server, when asked for in the options; `serveHttp` serves them at /metrics. */
  readonly metrics: TaskMetrics | undefined;
  private readonly tools = new Map<string, RegisteredTool>();
  private readonly sessions = new Set<TaskProtocolServer>();
  /** Resources, resource templates and prompts (see {@link TaskServer.resource}, {@link TaskServer.prompt}). */
  private readonly features = new FeatureRegistry();
  private readonly subscriptions = new ResourceSubscriptions();
  private readonly listeners = new ListChangedSessions();
  /** What the protocol binding's handlers reach (the HTTP plain-JSON path among them). */
  readonly host: EraHost;
  /** The drain on SIGINT/SIGTERM a stdio connection installed (see {@link connect}); removed by {@link close}. */
  private stdioStop: StopRegistration | null = null;
  private closing: Promise<void> | null = null;

  constructor(options: TaskServerOptions) {
    this.config = resolveConfig(options);
    this.metrics = options.metrics;
    this.engine = new TaskEngine({
      store: this.metrics ? this.metrics.instrument(options.store) : options.store,
      ...(this.metrics && { observer: this.metrics }),
      bus: options.bus ?? localEventBus(),
      runner: tracedRunner(toolTaskRunner(this.tools)),
      tracing: { ...linkingTaskTracing, ...waitSpans },
      ...(options.logger !== undefined && { logger: options.logger }),
      ttl: this.config.ttl,
      pollIntervalMs: this.config.pollIntervalMs,
      pageSize: this.config.pageSize,
      maxActivePerOwner: this.config.maxActivePerOwner,
      ...(options.maxStoredPerOwner !== undefined && { maxStoredPerOwner: options.maxStoredPerOwner }),
      ...(options.maxQueuedInputs !== undefined && { maxQueuedInputs: options.maxQueuedInputs }),
      ...(options.maxRunning !== undefined && { maxRunning: options.maxRunning }),
      ...(options.maxRunningPerOwner !== undefined && { maxRunningPerOwner: options.maxRunningPerOwner }),
      ...(options.maxQueuedPerOwner !== undefined && { maxQueuedPerOwner: options.maxQueuedPerOwner }),
      // Tools' own caps, read at each claim (tools register after construction).
      concurrencyByName: () => this.toolConcurrency(),
      ...(options.maxResultBytes !== undefined && { maxResultBytes: options.maxResultBytes }),
      ...(options.keepFinishedMs !== undefined && { keepFinishedMs: options.keepFinishedMs }),
      ...(options.rememberExpiredMs !== undefined && { rememberExpiredMs: options.rememberExpiredMs }),
      ...(options.sweepIntervalMs !== undefined && { sweepIntervalMs: options.sweepIntervalMs }),
      ...(options.rateLimit !== undefined && { rateLimit: options.rateLimit }),
      ...(options.failedLookups !== undefined && { failedLookups: options.failedLookups }),
      ...(options.auditArguments !== undefined && { auditArguments: options.auditArguments }),
      ...(options.now !== undefined && { now: options.now }),
      // A worker claims only tasks of tools it has (read at each claim: tools register later).
      ...(options.cluster !== undefined && { cluster: { names: () => this.toolNames, ...options.cluster } }),
      ...(options.webhooks !== undefined && { webhooks: options.webhooks }),
      ...(this.metrics && { webhookObserver: this.metrics }),
    });
    const metrics = this.metrics;
    metrics?.watchToolPauses(() => this.toolNames);
    this.host = {
      engine: this.engine,
      tools: this.tools,
      config: this.config,
      era: SESSION_ERA,
      features: this.features,
      ...(metrics && { recordOperation: (operation, seconds) => metrics.recordOperation(operation, seconds) }),
    };
    this.features.onChange((kind) => this.listChanged(kind));
  }

  /** The `concurrency` of each tool that declares one. */
  private toolConcurrency(): Record<string, number> {
    const caps: Record<string, number> = {};
    for (const [name, tool] of this.tools) if (tool.definition.concurrency !== undefined) caps[name] = tool.definition.concurrency;
    return caps;
  }

  /** Registers a tool. Call before connecting. */
  tool<S extends z.ZodType>(name: string, definition: ToolDefinition<S>, handler: ToolHandler<S>): this {
    if (this.tools.has(name)) throw new Error(`Tool ${name} is already registered`);
    if (definition.recovery !== undefined && !RECOVERY_POLICIES.includes(definition.recovery)) {
      throw new Error(`Tool ${name}: recovery must be one of ${RECOVERY_POLICIES.join(", ")}`);
    }
    if (definition.concurrency !== undefined && !(Number.isSafeInteger(definition.concurrency) && definition.concurrency > 0)) {
      throw new Error(`Tool ${name}: concurrency must be a positive integer`);
    }
    this.tools.set(name, { name, definition: definition as unknown as ToolDefinition, handler: handler as unknown as ToolHandler });
    this.listChanged("tools");
    return this;
  }

  /**
   * Removes a tool; connected sessions get `notifications/tools/list_changed`. Its tasks already
   * made keep running; new calls of it are -32602 (unknown tool). Returns whether it was there.
   */
  removeTool(name: string): boolean {
    const removed = this.tools.delete(name);
    if (removed) this.listChanged("tools");
    return removed;
  }

  /**
   * Registers a static resource: listed by `resources/list`, read by `resources/read` of its URI
   * through `read` (which returns a text, `{text}`/`{blob}` parts, or several). Registered after
   * sessions began, it is announced with `notifications/resources/list_changed`.
   *
   * @example app.resource({ uri: "config://app", name: "config", mimeType: "application/json" }, () => JSON.stringify(config))
   */
  resource(definition: ResourceDefinition, read: ResourceReadHandler): this {
    this.features.addResource({ definition, read });
    return this;
  }

  /**
   * Registers a resource template (RFC 6570 `uriTemplate`): `resources/read` of a URI it matches
   * calls `read` with the URI's variables; `list` names resources of it for `resources/list`;
   * `complete` suggests variable values for `completion/complete`. A malformed template throws here.
   *
   * @example app.resourceTemplate({ uriTemplate: "users://{id}/profile", name: "profile" }, (uri, { id }) => profileText(String(id)))
   */
  resourceTemplate(definition: ResourceTemplateDefinition, read: TemplateReadHandler): this {
    this.features.addTemplate(compileTemplate(definition, read));
    return this;
  }

  /**
   * Registers a prompt: listed by `prompts/list` (its `arguments` zod object of string fields as
   * `[{name, description, required}]`), rendered by `prompts/get` with the parsed arguments (a
   * missing required one is -32602). `complete` suggests argument values for `completion/complete`.
   */
  prompt<A extends PromptArguments>(name: string, definition: PromptDefinition<A>, handler: PromptHandler<A>): this {
    this.features.addPrompt(registerPrompt(name, definition as unknown as PromptDefinition, handler as unknown as PromptHandler));
    return this;
  }

  /** Removes a static resource (by URI) or a resource template (by its URI template); returns whether one was there. */
  removeResource(uriOrTemplate: string): boolean {
    return this.features.removeResource(uriOrTemplate);
  }

  /** Removes a prompt; returns whether it was there. */
  removePrompt(name: string): boolean {
    return this.features.removePrompt(name);
  }

  /**
   * Tells every session subscribed to `uri` (`resources/subscribe`) that the resource changed
   * (`notifications/resources/updated`). Sessions of this process only; resolves once each was tried.
   */
  resourceUpdated(uri: string): Promise<void> {
    return this.subscriptions.updated(uri);
  }

  /**
   * Calls `listener` when a resource URI gains its first subscribed session (`watched` true) and
   * loses its last (false), in this process; returns what stops it. For resources whose changes
   * come from elsewhere: the gateway subscribes upstream only to what someone watches.
   */
  onResourceWatch(listener: (uri: string, watched: boolean) => void): () => void {
    return this.subscriptions.onWatch(listener);
  }

  /** Tells connected sessions that a list changed (those that declared `listChanged` for it). */
  private listChanged(kind: ListKind): void {
    void this.listeners.announce(kind);
  }

  get toolNames(): string[] {
    return [...this.tools.keys()];
  }

  /** Opens the store's work: recovers interrupted tasks, starts the expiry sweeper. Idempotent. */
  start(): Promise<void> {
    return this.engine.start();
  }

  /**
   * Serves one connection (stdio, in-memory, or a Streamable HTTP session transport).
   * `clientCapabilities` and `standaloneStream: false` are for a server that serves one request
   * of a session initialized elsewhere, whose standalone stream is not this transport's (cluster HTTP).
   * `standaloneStreamOpened` says whether the client has opened that stream yet (Streamable HTTP:
   * a GET); until then task notifications meant for it are skipped.
   * `peer` names the other end of a connection that is one peer throughout (stdio: "stdio", or
   * a server that serves one HTTP request); `requestPeer` gives each request's own peer, by its
   * JSON-RPC id, where one connection carries requests from several (a Streamable HTTP session).
   *
   * Over stdio (a `StdioServerTransport`) the process serves this one client, so by default the
   * server also stops as `mcp-tasks serve` does on the process's first SIGINT or SIGTERM: it
   * drains (running handlers get `drainTimeoutMs`, default 30 s, to finish; the rest are handed
   * back and re-run at the next start, never failed), closes, and the process exits 0; a second
   * signal exits at once. `handleSignals: false` leaves the signals to the caller.
   */
  async connect(
    transport: Transport,
    connectionId?: string,
    options: {
      clientCapabilities?: ClientCapabilities;
      standaloneStream?: boolean;
      standaloneStreamOpened?: () => boolean;
      peer?: string;
      requestPeer?: (requestId: RequestId) => string | undefined;
      handleSignals?: boolean;
      drainTimeoutMs?: number;
    } = {},
  ): Promise<TaskProtocolServer> {
    await this.start();
    if (transport instanceof StdioServerTransport && options.handleSignals !== false && this.closing === null) {
      this.stdioStop ??= stopOnSignals(this, { drainTimeoutMs: options.drainTimeoutMs ?? DEFAULT_DRAIN_GRACE_MS });
    }
    const server = await connectSession(this.engine, this.tools, this.config, transport, connectionId, {
      ...(options.standaloneStream !== undefined && { standaloneStream: options.standaloneStream }),
      ...(options.standaloneStreamOpened && { standaloneStreamOpened: options.standaloneStreamOpened }),
      ...(options.peer !== undefined && { peer: options.peer }),
      ...(options.requestPeer && { requestPeer: options.requestPeer }),
      features: { registry: this.features, subscriptions: this.subscriptions, listeners: this.listeners },
      ...(this.host.recordOperation && { recordOperation: this.host.recordOperation }),
    });
    if (options.clientCapabilities) server.useClientCapabilities(options.clientCapabilities);
    this.sessions.add(server);
    const previous = server.onclose;
    server.onclose = () => {
      this.sessions.delete(server);
      this.subscriptions.drop(server);
      this.listeners.delete(server);
      previous?.();
    };
    return server;
  }

  /**
   * Drains before a stop (SIGTERM of a deploy): new tasks are refused with a retryable error, a
   * cluster worker claims nothing more, running handlers get `graceMs` to finish, and the rest are
   * handed back rather than failed (see TaskEngine.drain). Reads, results and cancels keep being
   * answered meanwhile; call {@link close} afterwards.
   */
  drain(graceMs: number): Promise<DrainReport> {
    return this.engine.drain(graceMs);
  }

  /**
   * Emits an event (docs/durable-execution.md, Events): every task of `owner` waiting for `name`
   * with `ctx.waitForEvent` wakes with `payload`; one that starts waiting within the event window
   * still sees it. `owner` is the owner key the tasks were created under (null: tasks created
   * without authentication). An approver addresses one task with a name such as `approval/<taskId>`.
   */
  emit(name: string, payload?: unknown, options: { owner?: string | null } = {}): Promise<EmitReport> {
    return this.engine.emit({ owner: options.owner ?? null, peer: "library" }, name, payload);
  }

  /**
   * Emits several events of one owner at once, in one store write (at most 1,000; each checked
   * as {@link emit} checks it, before any is stored): what an approver or a pipeline with many
   * events to send calls instead of one `emit` each. Their reports, in the same order.
   */
  emitMany(events: readonly { name: string; payload?: unknown }[], options: { owner?: string | null } = {}): Promise<EmitReport[]> {
    return this.engine.emitMany(
      { owner: options.owner ?? null, peer: "library" },
      events.map((event) => ({ name: event.name, payload: event.payload })),
    );
  }

  /** Stops the engine (see TaskEngine.close), then closes sessions, the bus and the store. Calling it again returns the same close. */
  close(): Promise<void> {
    this.stdioStop?.remove();
    this.stdioStop = null;
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private async closeOnce(): Promise<void> {
    // Engine first: blocked tasks/result calls get their answers while the sessions still exist.
    await this.engine.close();
    await new Promise((resolve) => setImmediate(resolve));
    for (const server of [...this.sessions]) await server.close().catch(() => {});
    await this.engine.bus.close();
    this.metrics?.close();
    await this.engine.store.close();
  }
}

/** Creates a {@link TaskServer}. */
export function createTaskServer(options: TaskServerOptions): TaskServer {
  return new TaskServer(options);
}
