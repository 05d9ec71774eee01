import {
  context,
  metrics,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Histogram,
  type Link,
  type MeterProvider,
  type Span,
} from "@opentelemetry/api";
import { toRpcError } from "../../core/errors.js";
import { OPERATION_DURATION_BUCKETS } from "../../metrics/operation-buckets.js";
import { boundedErrorType, boundedNames, type ServedNames } from "./served-names.js";
import { contextFrom, spanContextFrom, type TraceCarrier } from "./trace-carrier.js";
import { INSTRUMENTATION_NAME, tracer } from "./tracer.js";

/** One MCP request as the server received it, in the conventions' terms. */
export interface ServerOperation {
  /** `mcp.method.name`: the JSON-RPC method. */
  method: string;
  /** The tool (or prompt) the request names: the span's target and `gen_ai.tool.name`. */
  target?: string;
  requestId?: string | number;
  sessionId?: string;
  protocolVersion?: string;
  /** `network.transport`: "tcp" for HTTP, "pipe" for stdio. */
  transport?: "tcp" | "pipe";
  /** The trace context the request carried in its params' metadata (SEP-414), read by its era. */
  carrier?: TraceCarrier;
  /** The HTTP request's trace context (its `traceparent` header), used when the params carry none. */
  headerCarrier?: TraceCarrier;
  /** `mcp.task.id`, when the request names a task. */
  taskId?: string;
  /**
   * The names the server serves: a method or target outside them is recorded as `_unknown` in the
   * span's name and attributes and in the metrics (served-names.ts), never as the caller sent it.
   */
  served: ServedNames;
}

/** What a request's answer says about its outcome: a tool result with `isError` is a failure of its own kind. */
export type OutcomeOf<T> = (value: T) => { errorType: string } | undefined;

let duration: { provider: MeterProvider; histogram: Histogram } | undefined;

/**
 * `mcp.server.operation.duration`, on whichever meter provider is registered now (a no-op without
 * one); made again when the provider changes, as the task metrics' instruments are
 * (src/metrics/otel-task-metrics.ts): one taken from an earlier provider would record nowhere.
 */
function operationDuration(): Histogram {
  const provider = metrics.getMeterProvider();
  if (duration?.provider === provider) return duration.histogram;
  const histogram = provider.getMeter(INSTRUMENTATION_NAME).createHistogram("mcp.server.operation.duration", {
    unit: "s",
    description: "MCP request duration as observed on the receiver, from receipt until the result or error is sent",
    advice: { explicitBucketBoundaries: OPERATION_DURATION_BUCKETS },
  });
  duration = { provider, histogram };
  return histogram;
}

/** Where else a finished operation's duration goes (the Prometheus histogram of `/metrics`). */
export type OperationRecorder = (attributes: { method: string; target?: string; errorType?: string }, seconds: number) => void;

/**
 * Runs one request's handler inside its SERVER span, named and attributed as the OpenTelemetry
 * MCP semantic conventions say (`{mcp.method.name} {target}`). The parent is the context the
 * params carry (SEP-414), else the HTTP request's, else whatever span is active (an HTTP server
 * instrumentation's); with a parent from the params, an active HTTP span is linked instead. A
 * request about an existing task has no parent: every context it came with is a link.
 */
export function inOperationSpan<T>(
  received: ServerOperation,
  run: () => Promise<T>,
  outcomeOf?: OutcomeOf<T>,
  record?: OperationRecorder,
): Promise<T> {
  const started = performance.now();
  const operation: ServerOperation = { ...received, ...boundedNames(received.served, received.method, received.target) };
  const active = context.active();
  const ambient = trace.getSpanContext(active);
  const links: Link[] = [];
  let parent = active;
  let root = false;
  if (operation.taskId !== undefined) {
    // A follow-up (a poll, a wait, an answer, a cancel) is a trace of its own, linked to the
    // context it came with and, once the task is read, to the task's trace (task-links.ts): a task
    // polled a thousand times by a traced requestor stays one trace, not a thousand spans in it.
    root = true;
    const seen = new Set<string>();
    for (const carried of [spanContextFrom(operation.carrier), spanContextFrom(operation.headerCarrier), ambient]) {
      if (!carried || !trace.isSpanContextValid(carried) || seen.has(carried.spanId)) continue;
      seen.add(carried.spanId);
      links.push({ context: carried });
    }
  } else if (operation.carrier) {
    parent = contextFrom(operation.carrier);
    if (ambient && trace.isSpanContextValid(ambient)) links.push({ context: ambient });
  } else if (operation.headerCarrier && !(ambient && trace.isSpanContextValid(ambient))) {
    parent = contextFrom(operation.headerCarrier, active);
  }
  const name = operation.target === undefined ? operation.method : `${operation.method} ${operation.target}`;
  const span = tracer().startSpan(name, { kind: SpanKind.SERVER, attributes: attributesOf(operation), links, root }, parent);
  const open = new OpenOperation(span, started, operation.method, operation.target, record);
  let running: Promise<T>;
  try {
    running = context.with(trace.setSpan(parent, span), run);
  } catch (error) {
    running = Promise.reject(error);
  }
  // Continued, not awaited: no frame of this function is kept while a request waits (a blocked
  // tasks/result can wait for hours, thousands at once), only the operation's small record.
  return running.then(
    (value) => open.answered(value, outcomeOf),
    (error: unknown) => open.failed(error),
  );
}

/** A request's operation from its start to its answer: what its end records, and nothing of the request itself. */
class OpenOperation {
  constructor(
    private readonly span: Span,
    private readonly started: number,
    private readonly method: string,
    private readonly target: string | undefined,
    private readonly record: OperationRecorder | undefined,
  ) {}

  answered<T>(value: T, outcomeOf: OutcomeOf<T> | undefined): T {
    const failed = outcomeOf?.(value)?.errorType;
    this.ended(failed === undefined ? undefined : boundedErrorType(failed));
    return value;
  }

  failed(error: unknown): never {
    const { body } = toRpcError(error);
    this.span.setAttribute("rpc.response.status_code", String(body.code));
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: body.message });
    this.ended(boundedErrorType(String(body.code)));
    throw error;
  }

  private ended(errorType: string | undefined): void {
    const { span, method, target } = this;
    if (errorType !== undefined) {
      span.setAttribute("error.type", errorType);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
    const seconds = (performance.now() - this.started) / 1000;
    const metricAttributes: Attributes = { "mcp.method.name": method };
    if (target !== undefined && method === "tools/call") metricAttributes["gen_ai.tool.name"] = target;
    if (errorType !== undefined) metricAttributes["error.type"] = errorType;
    operationDuration().record(seconds, metricAttributes);
    this.record?.(
      {
        method,
        ...(target !== undefined && { target }),
        ...(errorType !== undefined && { errorType }),
      },
      seconds,
    );
  }
}

function attributesOf(operation: ServerOperation): Attributes {
  const attributes: Attributes = { "mcp.method.name": operation.method };
  if (operation.requestId !== undefined) attributes["jsonrpc.request.id"] = String(operation.requestId);
  if (operation.sessionId !== undefined) attributes["mcp.session.id"] = operation.sessionId;
  if (operation.protocolVersion !== undefined) attributes["mcp.protocol.version"] = operation.protocolVersion;
  if (operation.transport !== undefined) attributes["network.transport"] = operation.transport;
  if (operation.taskId !== undefined) attributes["mcp.task.id"] = operation.taskId;
  if (operation.method === "tools/call" && operation.target !== undefined) {
    attributes["gen_ai.tool.name"] = operation.target;
    attributes["gen_ai.operation.name"] = "execute_tool";
  }
  return attributes;
}
