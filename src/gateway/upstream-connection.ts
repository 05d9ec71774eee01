import { Readable } from "node:stream";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { inClientSpan, traceMetaParams } from "../mcp/tracing/client-span.js";
import { toolCallOutcome } from "../mcp/tracing/tool-call-outcome.js";
import { currentCarrier } from "../mcp/tracing/trace-carrier.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  type CallToolResult,
  type ElicitRequestFormParams,
  type ListRootsResult,
  type Notification,
  type Root,
} from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import { RpcCode, TaskError } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { ToolContext } from "../mcp/tool-definition.js";
import { SESSION_REQUESTOR } from "../mcp/requestor/requestor-eras.js";
import { connectionCause, systemCode } from "../mcp/connection-cause.js";
import { tiedToGateway } from "./upstream-lifetime.js";
import { UpstreamStderr } from "./upstream-stderr.js";
import { followUpstreamTask, type UpstreamTaskHost } from "./upstream-task.js";
import { UpstreamTaskBindings } from "./upstream-task-bindings.js";
import { describeUpstream, type UpstreamTarget } from "./upstream-target.js";

/** How the connection restarts a lost upstream, and how long a call may wait. */
export interface UpstreamOptions {
  logger: Logger;
  /** Longest an upstream call may go without an answer or a progress notification (ms). */
  timeoutMs: number;
  /** First restart delay after a loss (ms), doubled per failed attempt up to `maxRestartDelayMs`. */
  restartDelayMs?: number;
  maxRestartDelayMs?: number;
  /** The gateway's own roots (`--root`): the answer to a `roots/list` no requestor is asked. */
  roots?: Root[];
}

/** How one upstream tool call is made. */
export interface UpstreamCallOptions {
  /** Longest the upstream may stay silent (ms); default the connection's `timeoutMs`. */
  timeoutMs?: number | undefined;
  /** Re-sends when the upstream dies under the call (default 0: the call fails). */
  retries?: number | undefined;
  /** Call it as a task of the upstream and follow that task (upstream-task.ts). */
  asTask?: boolean | undefined;
  /** ttl asked for the upstream task. */
  ttl?: number | undefined;
}

/**
 * The upstream went away under a call (exit, crash, kill): what a re-send can cure. The SDK
 * rejects such a call with -32000 once it has dropped the client's transport; the same code
 * answered by a connected upstream is that server's own error, never re-sent.
 */
function isConnectionLoss(error: unknown, client: Client): boolean {
  return error instanceof McpError && error.code === ErrorCode.ConnectionClosed && client.transport === undefined;
}

/**
 * An HTTP upstream no longer knows the gateway's session: it restarted (or dropped the session).
 * Streamable HTTP says 404; servers built on the SDK's examples (server-everything among them)
 * answer 400 "No valid session ID provided". The request never ran there, so it may be sent
 * again on a new session.
 */
function isSessionLost(error: unknown): boolean {
  if (!(error instanceof StreamableHTTPError)) return false;
  return error.code === 404 || (error.code === 400 && /session/i.test(error.message));
}

/**
 * The SDK client checks a result against the tool's outputSchema and throws -32602 or -32600 when
 * it does not fit: the upstream broke its own promise, which says nothing wrong of the request.
 * What it broke, in words, or null for any other error.
 */
function outputSchemaBreach(error: McpError): string | null {
  const fits = /Structured content does not match the tool's output schema: (.*)$/.exec(error.message);
  if (fits) return `structured content that does not fit the tool's outputSchema (${fits[1]})`;
  if (/has an output schema but did not return structured content/.test(error.message))
    return "no structured content, although the tool has an outputSchema";
  return null;
}

/** The SDK's own timeout of a call (-32001 with the `timeout` it waited), not an upstream's -32001 answer. */
function isOwnTimeout(error: McpError, timeoutMs: number): boolean {
  return error.code === ErrorCode.RequestTimeout && (error.data as { timeout?: unknown } | undefined)?.timeout === timeoutMs;
}

/** What runs on every (re)connected client: registers handlers, lists what it offers. */
export type ConnectedListener = (client: Client) => void | Promise<void>;

/** A notification the gateway relays, with its handler (registered on every client). */
interface NotificationRoute {
  schema: z.ZodObject<{ method: z.ZodLiteral<string> }>;
  handler: (notification: Notification) => void;
}

/**
 * The gateway's one connection to its upstream MCP server, through the official SDK client: it
 * declares elicitation and sampling so the upstream may ask, routes what the upstream asks to the
 * call it belongs to, and restarts a lost upstream with backoff (calls in flight then fail).
 */
export class UpstreamConnection implements UpstreamTaskHost {
  readonly name: string;
  private current: Client | null = null;
  private waiting: Array<() => void> = [];
  private closing = false;
  private attempt = 0;
  private restartTimer: NodeJS.Timeout | null = null;
  /** Calls in flight, by a local id: what the upstream asks is put to their requestor. */
  private readonly calls = new Map<number, ToolContext>();
  /** Calls following an upstream task, by its id: a question naming the task goes to its call, and to no other. */
  private readonly tasks = new UpstreamTaskBindings();
  private nextCall = 0;
  private readonly connected: ConnectedListener[] = [];
  private readonly routes: NotificationRoute[] = [];
  /** Clients dropped because the upstream forgot their session: what they were sending never ran there. */
  private readonly sessionsLost = new WeakSet<Client>();
  /** A stdio upstream's stderr, as fields of the gateway's own log lines. */
  private readonly stderr: UpstreamStderr;

  constructor(
    private readonly target: UpstreamTarget,
    private readonly options: UpstreamOptions,
  ) {
    this.name = describeUpstream(target);
    this.stderr = new UpstreamStderr(options.logger, this.name);
  }

  /** Runs `listener` on each connected client, the first and every restarted one. */
  onConnected(listener: ConnectedListener): void {
    this.connected.push(listener);
  }

  /** Handles an upstream notification on every client. */
  onNotification<S extends z.ZodObject<{ method: z.ZodLiteral<string> }>>(schema: S, handler: (notification: z.infer<S>) => void): void {
    this.routes.push({ schema, handler: handler as (notification: Notification) => void });
    this.current?.setNotificationHandler(schema, handler);
  }

  /** Connects the first time; a failure here is the caller's (the gateway does not start), said in words. */
  async start(): Promise<void> {
    try {
      await this.connect();
    } catch (error) {
      throw new Error(`cannot connect to the upstream server (${this.name}): ${this.startFailure(error)}`, { cause: error });
    }
  }

  /** Why the first connection failed, as the person starting the gateway can act on it. */
  private startFailure(error: unknown): string {
    if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
      return "it closed the connection before answering initialize (it exited: see its own output above)";
    }
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      return `it did not answer initialize within ${this.options.timeoutMs} ms (--upstream-timeout)`;
    }
    const code = systemCode(error);
    if (this.target.kind === "url") return connectionCause(this.target.url.href, error);
    if (code === "ENOENT") return "its command was not found (check --upstream-stdio)";
    return error instanceof Error ? error.message : String(error);
  }

  /** The connected client, waiting up to `waitMs` for a restart under way. */
  async client(waitMs = this.options.timeoutMs): Promise<Client> {
    if (this.current) return this.current;
    if (this.closing) throw upstreamError("The gateway is shutting down");
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, waitMs);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.waiting.push(done);
    });
    if (!this.current) throw upstreamError(`The upstream server (${this.name}) is not connected: it is being restarted; try again`);
    return this.current;
  }

  /**
   * Calls a tool upstream with the requestor's context: the upstream's progress becomes
   * `ctx.progress`, its elicitation and sampling requests `ctx.elicit` / `ctx.sample`, and an
   * abort of `ctx.signal` sends it `notifications/cancelled`. Its JSON-RPC error is thrown as it
   * is; a loss of the upstream, a timeout or an invalid answer as a clear -32603. When the upstream
   * dies under the call and `retries` allows (crash-retry.ts), the call is re-sent to the restarted
   * upstream, up to `retries` times.
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    ctx: ToolContext,
    options: UpstreamCallOptions = {},
  ): Promise<CallToolResult> {
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs;
    if (options.asTask) return followUpstreamTask(this, this.options.logger, { name, args, ctx, timeoutMs, ttl: options.ttl });
    const retries = options.retries ?? 0;
    // A re-sent call starts its progress over: only what goes beyond the furthest reported is passed on.
    let furthest = -Infinity;
    let sessionRenewed = false;
    for (let attempt = 0; ; attempt++) {
      const client = await this.client(timeoutMs);
      const id = this.nextCall++;
      this.calls.set(id, ctx);
      try {
        // The upstream's own spans join the task's trace: the call is a CLIENT span of the execution, its context in `_meta`.
        return await inClientSpan(
          "tools/call",
          name,
          async () =>
            (await client.callTool({ name, arguments: args, ...traceMetaParams() }, undefined, {
              signal: ctx.signal,
              timeout: timeoutMs,
              resetTimeoutOnProgress: true,
              onprogress: (p) => {
                if (p.progress <= furthest) return;
                furthest = p.progress;
                ctx.progress(p.progress, p.total, p.message);
              },
            })) as CallToolResult,
          {},
          toolCallOutcome,
        );
      } catch (error) {
        if (!sessionRenewed && !ctx.signal.aborted && this.sessionLost(client, error)) {
          // The client is being replaced (see connect()'s onerror); the call waits for the new one.
          sessionRenewed = true;
          attempt--;
          continue;
        }
        if (attempt < retries && !ctx.signal.aborted && isConnectionLoss(error, client)) {
          this.options.logger.warn(
            { upstream: this.name, tool: name, retry: attempt + 1, of: retries },
            "upstream lost during a call; re-sending it once restarted",
          );
          await ctx.setStatusMessage(
            `The upstream server (${this.name}) exited or crashed during the call; re-sending it once restarted (retry ${attempt + 1} of ${retries})`,
          );
          continue;
        }
        throw this.callFailure(name, error, client, timeoutMs, ctx.signal, attempt);
      } finally {
        this.calls.delete(id);
      }
    }
  }

  attach(ctx: ToolContext): () => void {
    const id = this.nextCall++;
    this.calls.set(id, ctx);
    return () => this.calls.delete(id);
  }

  sessionLost(client: Client, error: unknown): boolean {
    return isSessionLost(error) || this.sessionsLost.has(client);
  }

  bindTask(upstreamTaskId: string, ctx: ToolContext): (() => void) | null {
    return this.tasks.bind(upstreamTaskId, ctx);
  }

  /**
   * The call an upstream request belongs to: the one following the upstream task the request's
   * related-task metadata names (T-INPUT-2), and no other — a request naming a task no call
   * follows (ended, or never the gateway's) is refused rather than put to whoever is in flight;
   * a request naming none goes to the sole call in flight.
   */
  private callOf(method: string, meta: Record<string, unknown> | undefined): ToolContext {
    const taskId = SESSION_REQUESTOR.upstream.relatedTaskOf({ _meta: meta });
    if (taskId === null) return this.soleCall(method);
    const ctx = this.tasks.follower(taskId);
    if (ctx) return ctx;
    throw new McpError(ErrorCode.InvalidParams, `${method}: the gateway follows no upstream task ${taskId} now, so it has no one to ask`);
  }

  /** The call an upstream notification is about, as {@link callOf} finds it; null: no one. */
  private notifiedCall(meta: Record<string, unknown> | undefined): ToolContext | null {
    const taskId = SESSION_REQUESTOR.upstream.relatedTaskOf({ _meta: meta });
    if (taskId !== null) return this.tasks.follower(taskId) ?? null;
    if (this.calls.size !== 1) return null;
    const [ctx] = this.calls.values();
    return ctx ?? null;
  }

  /** What a failed upstream call ends the task with. */
  private callFailure(name: string, error: unknown, client: Client, timeoutMs: number, signal: AbortSignal, retried: number): unknown {
    if (signal.aborted) return error; // cancelled: the engine has settled the task already
    if (error instanceof McpError) {
      if (isConnectionLoss(error, client)) {
        const after = retried === 0 ? "" : `, also after ${retried} re-send${retried === 1 ? "" : "s"}`;
        return upstreamError(
          `The upstream server (${this.name}) closed the connection during tools/call ${name} (it exited or crashed${after}); the gateway restarts it`,
        );
      }
      const unfit = outputSchemaBreach(error);
      if (unfit !== null) return upstreamError(`The upstream server (${this.name}) answered tools/call ${name} with ${unfit}`);
      if (isOwnTimeout(error, timeoutMs)) {
        return upstreamError(
          `The upstream server (${this.name}) sent no answer to tools/call ${name} for ${timeoutMs} ms; the call was cancelled upstream`,
        );
      }
      return error; // the upstream's own JSON-RPC error, replayed as it is
    }
    if (error instanceof TaskError) return error;
    if (this.target.kind === "url" && systemCode(error) !== undefined) {
      return upstreamError(
        `The upstream server (${this.name}) could not be reached for tools/call ${name}: ${connectionCause(this.target.url.href, error)}`,
      );
    }
    if (isSessionLost(error)) {
      return upstreamError(
        `The upstream server (${this.name}) no longer knows the gateway's session (it restarted), also on a new session; the call did not run there`,
      );
    }
    this.options.logger.warn({ upstream: this.name, tool: name, err: error }, "upstream answered tools/call with an invalid result");
    return upstreamError(`The upstream server (${this.name}) answered tools/call ${name} with an invalid result`);
  }

  /**
   * The call an upstream request belongs to. Neither stdio nor Streamable HTTP tells the client
   * which of its calls a server's request relates to, so a question is put to a requestor only
   * when exactly one call is in flight: guessing among several could show one principal's
   * question to another.
   */
  private soleCall(method: string): ToolContext {
    if (this.calls.size === 1) {
      const [ctx] = this.calls.values();
      if (ctx) return ctx;
    }
    throw new McpError(
      ErrorCode.InvalidRequest,
      this.calls.size === 0
        ? `${method}: the gateway has no call in flight to ask about`
        : `${method}: the gateway has ${this.calls.size} calls in flight and cannot tell which one asks`,
    );
  }

  /**
   * The answer to the upstream's `roots/list`: during a call (the one following the upstream task
   * its related-task metadata names, else the sole call in flight), the requestor's own roots when
   * it declared the roots capability (a question, `input_required` for a task); otherwise — asked
   * at initialization (server-filesystem asks then), between calls, with several calls in flight,
   * naming a task no call follows, or of a requestor without roots — the gateway's configured
   * roots, which are nobody's secret.
   */
  private async roots(meta: Record<string, unknown> | undefined): Promise<ListRootsResult> {
    const ctx = this.notifiedCall(meta);
    if (ctx?.can.roots && ctx.listRoots) return await ctx.listRoots();
    return { roots: this.options.roots ?? [] };
  }

  private async connect(): Promise<void> {
    // The gateway follows the upstream's tasks itself: said at initialize, so an upstream with a
    // fallback for hosts without tasks does not offer its task tools to the gateway (whose
    // requestors would then reach every principal's upstream tasks through one connection).
    const capabilities = { elicitation: {}, sampling: {}, roots: {}, ...SESSION_REQUESTOR.upstream.clientCapabilities };
    const client = new Client({ name: "mcp-tasks-gateway", version: "0.1.0" }, { capabilities });
    client.setRequestHandler(ListRootsRequestSchema, async (request) => this.roots(request.params?._meta));
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const ctx = this.callOf("elicitation/create", request.params._meta);
      if (request.params.mode === "url") throw new McpError(ErrorCode.InvalidParams, "The gateway relays form elicitation only");
      return await ctx.elicit(request.params as ElicitRequestFormParams);
    });
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      const ctx = this.callOf("sampling/createMessage", request.params._meta);
      return await ctx.sample(request.params);
    });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      const { level, data, logger, _meta } = notification.params;
      const ctx = this.notifiedCall(_meta);
      if (ctx) ctx.log(level, data, logger);
      else
        this.options.logger.debug(
          { upstream: this.name, upstreamLevel: level, upstreamLogger: logger },
          "upstream log message (no single call to relay it to)",
        );
    });
    for (const route of this.routes) client.setNotificationHandler(route.schema, route.handler);
    client.onerror = (error) => {
      if (isSessionLost(error)) {
        // A restarted HTTP upstream forgets its sessions and refuses each request from then on:
        // this client is dropped (its onclose restarts the connection with a new initialize).
        this.options.logger.warn(
          { upstream: this.name },
          "the upstream server no longer knows the gateway's session (it restarted); connecting again",
        );
        // No call may pick this client up meanwhile: they wait for the new one (client()). Its
        // calls in flight fail as closed, and are sent again (callTool).
        this.sessionsLost.add(client);
        if (this.current === client) this.current = null;
        void client.close().catch(() => {});
        return;
      }
      // Garbage on the wire (not JSON, not JSON-RPC) is dropped by the transport; a call it
      // should have answered ends at its timeout. The garbage itself stays out of the log.
      if (error.name === "SyntaxError" || error.name === "ZodError") {
        this.options.logger.warn({ upstream: this.name, error: error.name }, "upstream sent something that is not a JSON-RPC message");
        return;
      }
      // Anything else the SDK reports is about a well-formed message — most often a progress
      // notification sent after its call's answer. Its text can quote upstream content, so only
      // its start is kept, at debug.
      this.options.logger.debug({ upstream: this.name, error: error.message.slice(0, 120) }, "upstream message the gateway could not use");
    };
    await client.connect(this.transport(), { timeout: this.options.timeoutMs });
    if (this.closing) {
      await client.close();
      return;
    }
    const since = Date.now();
    let lost = false;
    client.onclose = () => {
      lost = true;
      if (this.current === client) this.current = null;
      if (this.closing) return;
      // A connection that stayed up a while starts the backoff over; a crash loop climbs it.
      if (Date.now() - since > 30_000) this.attempt = 0;
      this.options.logger.warn({ upstream: this.name, inFlight: this.calls.size }, "upstream connection lost; restarting it");
      this.scheduleRestart();
    };
    try {
      for (const listener of this.connected) await listener(client);
    } catch (error) {
      // Listing failed: this client is dropped (its process ended), and the caller retries.
      client.onclose = undefined;
      await client.close().catch(() => {});
      throw error;
    }
    // Lost while listing: its onclose has scheduled the next attempt already.
    if (lost) return;
    this.current = client;
    this.tasks.reconnected();
    for (const wake of this.waiting.splice(0)) wake();
    this.options.logger.info({ upstream: this.name }, "connected to the upstream server");
  }

  private scheduleRestart(): void {
    const first = this.options.restartDelayMs ?? 250;
    const delay = Math.min(first * 2 ** this.attempt, this.options.maxRestartDelayMs ?? 30_000);
    this.attempt++;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      this.connect().catch((error: unknown) => {
        this.options.logger.warn(
          { upstream: this.name, error: error instanceof Error ? error.message : String(error) },
          "upstream restart failed",
        );
        if (!this.closing) this.scheduleRestart();
      });
    }, delay);
  }

  private transport(): Transport {
    if (this.target.kind === "stdio") {
      // The gateway's environment goes to the upstream (its credentials may be there). Its stderr
      // is read line by line into fields of the gateway's own log lines, never passed on raw: an
      // upstream could otherwise write lines that read as the gateway's (its audit lines).
      const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
      const transport = new StdioClientTransport({ ...tiedToGateway(this.target, env), env, stderr: "pipe" });
      if (transport.stderr instanceof Readable) this.stderr.read(transport.stderr);
      return transport;
    }
    // W3C Trace Context headers too, for an upstream whose HTTP instrumentation reads only those.
    return new StreamableHTTPClientTransport(this.target.url, {
      requestInit: { headers: this.target.headers },
      fetch: fetchWithTraceHeaders,
    });
  }

  /** Stops restarting and closes the client (a stdio upstream is ended). */
  async close(): Promise<void> {
    this.closing = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    for (const wake of this.waiting.splice(0)) wake();
    const client = this.current;
    this.current = null;
    await client?.close().catch(() => {});
  }
}

/** A failure of the upstream, as the requestor and the task's statusMessage see it. */
function upstreamError(message: string): TaskError {
  return TaskError.protocol(RpcCode.InternalError, message);
}

/** `fetch` with the active trace context's W3C headers (`traceparent`, `tracestate`, `baggage`) added. */
const fetchWithTraceHeaders = (url: string | URL, init?: RequestInit): Promise<Response> => {
  const carrier = currentCarrier();
  if (!carrier) return fetch(url, init);
  const headers = new Headers(init?.headers);
  for (const [name, value] of Object.entries(carrier)) headers.set(name, value);
  return fetch(url, { ...init, headers });
};
