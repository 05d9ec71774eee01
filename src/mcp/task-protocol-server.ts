import { Server, type ServerOptions } from "@modelcontextprotocol/sdk/server/index.js";
import { safeParse } from "@modelcontextprotocol/sdk/server/zod-compat.js";
import { getMethodLiteral } from "@modelcontextprotocol/sdk/server/zod-json-schema-compat.js";
import { Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { ClientCapabilities, Implementation, JSONRPCRequest, RequestId } from "@modelcontextprotocol/sdk/types.js";
import type { AbortWatch } from "../core/abort-watch.js";
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { z } from "zod";
import { TaskError, toRpcError } from "../core/errors.js";
import { describeIssues } from "./schema-issues.js";
import { silentLogger, type Logger } from "../core/logger.js";
import { LogThreshold } from "./logging/log-level.js";
import type { OperationTrace } from "./era.js";
import type { LooseParams } from "./request-schemas.js";
import { inOperationSpan, type OperationRecorder } from "./tracing/operation-span.js";
import type { ServedNames } from "./tracing/served-names.js";
import { toolCallOutcome } from "./tracing/tool-call-outcome.js";
import { carrierFrom } from "./tracing/trace-carrier.js";

/** How a session server's requests are traced: its era's reading of their params, where durations go. */
export interface SessionTracing {
  operationTrace(method: string, params: LooseParams): OperationTrace;
  /** The protocol revision, when the transport does not say it per request. */
  protocolVersion: string;
  /** The tools and prompts the session serves (its methods are the handlers it has: every traced one is served). */
  served: ServedNames;
  record?: OperationRecorder;
}

/**
 * The `extra` a handler gets from {@link TaskProtocolServer.answerOwn}: what ours read of the
 * SDK's. `signal` should be made only when read (a getter): the waits listen to `abandoned`.
 */
export interface OwnRequestExtra {
  requestId: RequestId;
  sessionId: string | undefined;
  authInfo: AuthInfo | undefined;
  requestInfo: { headers: Record<string, string | string[] | undefined> };
  readonly signal: AbortSignal;
  abandoned: AbortWatch;
}

/** The parts of the SDK's handler `extra` a span reads. */
interface RequestExtra {
  requestId?: string | number;
  sessionId?: string;
  requestInfo?: { headers?: Record<string, string | string[] | undefined> };
}

/**
 * The SDK's Ajv validator, built on first use. The SDK builds one per `Server` (an Ajv instance
 * with its formats: about a millisecond of CPU and a few hundred kB), used only by
 * `Server.elicitInput`, which this package never calls; a cluster node builds a `Server` for every
 * HTTP request, so an eager one was a large share of each request's cost. Not shared between
 * servers: Ajv caches every schema object it compiles.
 */
class LazyAjvValidator implements jsonSchemaValidator {
  private inner: AjvJsonSchemaValidator | null = null;

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    this.inner ??= new AjvJsonSchemaValidator();
    return this.inner.getValidator<T>(schema);
  }
}

/**
 * The SDK `Server` with its experimental task machinery kept out of the way: tasks are a layer on
 * top of the protocol, implemented by our handlers.
 */
export class TaskProtocolServer extends Server {
  private knownClientCapabilities: ClientCapabilities | undefined;
  private readonly logger: Logger;
  /** The level this session's client asked for with `logging/setLevel`: lower messages are not sent. */
  readonly logThreshold = new LogThreshold();

  /** @param options.logger where the details of unexpected handler failures go (never to the requestor). */
  /** Set once the constructor has run: the SDK registers its own handlers (initialize) from within `super`. */
  private tracing: SessionTracing | undefined;
  /** Each method's handler as installed (see {@link answerOwn}); filled from within `super` too, hence `declare` (no initializer to reset it) and `??=`. */
  declare private ownHandlersMap: Map<string, (request: unknown, extra: unknown) => Promise<unknown>> | undefined;

  private get ownHandlers(): Map<string, (request: unknown, extra: unknown) => Promise<unknown>> {
    return (this.ownHandlersMap ??= new Map());
  }

  constructor(info: Implementation, options: ServerOptions & { logger?: Logger; tracing?: SessionTracing }) {
    const { logger, tracing, ...serverOptions } = options;
    super(info, { jsonSchemaValidator: new LazyAjvValidator(), ...serverOptions });
    this.logger = logger ?? silentLogger;
    this.tracing = tracing;
  }

  /**
   * For a server that serves one request of a session initialized elsewhere (cluster HTTP): the
   * client's capabilities as recorded at that initialization.
   */
  useClientCapabilities(capabilities: ClientCapabilities): void {
    this.knownClientCapabilities = capabilities;
  }

  override getClientCapabilities(): ClientCapabilities | undefined {
    return super.getClientCapabilities() ?? this.knownClientCapabilities;
  }

  /**
   * The SDK refuses a task-augmented request when `capabilities.tasks` lacks it; T-NEW-4 says
   * such a request is processed normally with its task metadata ignored. Our tools/call handler
   * makes that decision, so the SDK's check is disabled.
   */
  protected override assertTaskHandlerCapability(): void {}

  /**
   * The SDK wraps tools/call to re-validate results against its own expectations (a
   * CreateTaskResult whenever `params.task` is present — wrong when tasks are switched off).
   * Our handler validates the request and shapes the result itself, so it is installed directly.
   *
   * Every handler (the SDK's own, such as initialize, and ours) also answers as the errors table
   * (docs/errors.md) says, which the SDK alone does not: a request failing its schema is the
   * requestor's error, -32602 (the SDK answers -32603 with the validator's dump — e.g. for params
   * with a `constructor` key, which zod does not take for a record); anything thrown without a
   * JSON-RPC code is -32603 "Internal error", its details in the log only (T-ERR-4), not echoed.
   */
  override setRequestHandler(...args: Parameters<Server["setRequestHandler"]>): void {
    const [schema, handler] = args;
    const method = getMethodLiteral(schema);
    const routing = z.object({ method: z.literal(method) }).loose();
    // One per method, not per request: a request that waits keeps its continuations, and this
    // one needs nothing of the request.
    const failed = (error: unknown): never => {
      const { body, known } = toRpcError(error);
      if (!known) this.logger.error({ err: error, method }, "request handler failed");
      throw TaskError.protocol(body.code, body.message, body.data);
    };
    const guarded = (request: unknown, extra: unknown): Promise<unknown> =>
      this.answerGuarded(method, schema, handler as (request: unknown, extra: unknown) => unknown, failed, request, extra);
    this.ownHandlers.set(method, guarded);
    Protocol.prototype.setRequestHandler.call(this, routing as never, guarded as never);
  }

  override removeRequestHandler(method: string): void {
    this.ownHandlers.delete(method);
    super.removeRequestHandler(method);
  }

  /**
   * Answers `request` with the handler installed for its method (its schema check, span and error
   * mapping included) outside the SDK's `Protocol`: for a request whose stream our transport
   * writes itself (a blocked `tasks/result`, `src/http/request-streams.ts`), which would otherwise
   * keep the SDK's context for the request (its `extra`, abort controller, closures and promise
   * chain) for as long as it waits. Resolves with the result and rejects with the JSON-RPC error
   * its response carries; undefined when no handler is installed for the method (the SDK's
   * `Protocol` answers it). The caller owns the response, and the request's cancellation:
   * `extra.abandoned` aborts it, and no response is owed once it has.
   */
  answerOwn(request: JSONRPCRequest, extra: OwnRequestExtra): Promise<unknown> | undefined {
    return this.ownHandlers.get(request.method)?.(request, extra);
  }

  /** Continued, not awaited: no frame is kept while a request waits (a blocked tasks/result). */
  private answerGuarded(
    method: string,
    schema: unknown,
    handler: (request: unknown, extra: unknown) => unknown,
    failed: (error: unknown) => never,
    request: unknown,
    extra: unknown,
  ): Promise<unknown> {
    let parsed: ReturnType<typeof safeParse> | null;
    try {
      parsed = safeParse(schema as Parameters<typeof safeParse>[0], request);
    } catch {
      parsed = null; // zod throws on some shapes, e.g. a `constructor` key that is null
    }
    const answer = (): Promise<unknown> => {
      if (!parsed?.success)
        return Promise.reject(TaskError.invalidParams(`Invalid params for ${method}: ${describeIssues(parsed?.error)}`));
      try {
        return Promise.resolve(handler(parsed.data, extra)).catch(failed);
      } catch (error) {
        return Promise.reject(error).catch(failed);
      }
    };
    const tracing = this.tracing;
    if (!tracing) return answer();
    const { requestId, sessionId, requestInfo } = (extra ?? {}) as RequestExtra;
    const headers = requestInfo?.headers;
    const versionHeader = headers?.["mcp-protocol-version"];
    const params = (request as { params?: LooseParams } | null)?.params;
    const headerCarrier = carrierFrom(headers);
    return inOperationSpan(
      {
        method,
        ...tracing.operationTrace(method, params),
        ...(requestId !== undefined && { requestId }),
        ...(sessionId !== undefined && { sessionId }),
        protocolVersion: typeof versionHeader === "string" ? versionHeader : tracing.protocolVersion,
        transport: requestInfo ? "tcp" : "pipe",
        ...(headerCarrier && { headerCarrier }),
        served: tracing.served,
      },
      answer,
      method === "tools/call" ? toolCallOutcome : undefined,
      tracing.record,
    );
  }
}
