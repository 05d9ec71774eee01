import { Server, type ServerOptions } from "@modelcontextprotocol/sdk/server/index.js";
import { safeParse } from "@modelcontextprotocol/sdk/server/zod-compat.js";
import { getMethodLiteral } from "@modelcontextprotocol/sdk/server/zod-json-schema-compat.js";
import { Protocol } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ClientCapabilities, Implementation } from "@modelcontextprotocol/sdk/types.js";
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
    const guarded = async (request: unknown, extra: unknown): Promise<unknown> => {
      let parsed: ReturnType<typeof safeParse> | null;
      try {
        parsed = safeParse(schema, request);
      } catch {
        parsed = null; // zod throws on some shapes, e.g. a `constructor` key that is null
      }
      const failed = (error: unknown): never => {
        const { body, known } = toRpcError(error);
        if (!known) this.logger.error({ err: error, method }, "request handler failed");
        throw TaskError.protocol(body.code, body.message, body.data);
      };
      // Continued, not awaited: no frame is kept while a request waits (a blocked tasks/result).
      const answer = (): Promise<unknown> => {
        if (!parsed?.success)
          return Promise.reject(TaskError.invalidParams(`Invalid params for ${method}: ${describeIssues(parsed?.error)}`));
        try {
          return Promise.resolve((handler as (request: unknown, extra: unknown) => unknown)(parsed.data, extra)).catch(failed);
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
    };
    Protocol.prototype.setRequestHandler.call(this, routing as never, guarded as never);
  }
}
