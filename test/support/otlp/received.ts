/** Attribute values as a receiver keeps them (OTLP AnyValue: int64 values as numbers, they are small here). */
export type AttributeValue = string | number | boolean | AttributeValue[] | null;

export interface ReceivedEvent {
  name: string;
  timeUnixNano: bigint;
  attributes: Record<string, AttributeValue>;
}

export interface ReceivedLink {
  traceId: string;
  spanId: string;
  attributes: Record<string, AttributeValue>;
}

/** One span as an OTLP exporter sent it, ids in lower-case hex. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, AttributeValue>;
  events: ReceivedEvent[];
  links: ReceivedLink[];
  /** OTLP StatusCode: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  startTimeUnixNano: bigint;
  endTimeUnixNano: bigint;
  /** The exporting process's resource (service.name…) and the instrumentation scope's name. */
  resource: Record<string, AttributeValue>;
  scope: string;
  /** How it came: "protobuf" or "json". */
  encoding: "protobuf" | "json";
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;
export const STATUS_ERROR = 2;

/**
 * One data point of a metric as an OTLP exporter sent it: a sum's or gauge's `value`, or a
 * histogram's `count` and `sum`. Cumulative temporality (the SDK's default): each export carries
 * the totals since the process started.
 */
export interface ReceivedMetricPoint {
  /** The metric's name (`mcp.tasks.created`, …). */
  name: string;
  unit: string;
  kind: "sum" | "gauge" | "histogram";
  attributes: Record<string, AttributeValue>;
  value?: number;
  count?: number;
  sum?: number;
  resource: Record<string, AttributeValue>;
  scope: string;
}
