import { context, propagation, ROOT_CONTEXT, trace, TraceFlags, type Context, type SpanContext } from "@opentelemetry/api";

/** A propagation carrier: W3C Trace Context (and baggage) fields by name. */
export type TraceCarrier = Readonly<Record<string, string>>;

/** The fields SEP-414 carries in a request's `_meta`, and HTTP in its headers (W3C Trace Context, W3C Baggage). */
export const TRACE_FIELDS = ["traceparent", "tracestate", "baggage"] as const;

/** The trace fields of a record (`_meta`, headers), or undefined without a `traceparent` string. */
export function carrierFrom(record: unknown): TraceCarrier | undefined {
  if (typeof record !== "object" || record === null) return undefined;
  const fields = record as Record<string, unknown>;
  if (typeof fields["traceparent"] !== "string") return undefined;
  const carrier: Record<string, string> = {};
  for (const name of TRACE_FIELDS) {
    const value = fields[name];
    if (typeof value === "string") carrier[name] = value;
  }
  return carrier;
}

/** The context a carrier names, on top of `base` (the global propagator decides what it reads; W3C Trace Context without one). */
export function contextFrom(carrier: TraceCarrier, base: Context = ROOT_CONTEXT): Context {
  const extracted = propagation.extract(base, carrier);
  if (trace.getSpanContext(extracted) !== undefined) return extracted;
  const parent = parseTraceparent(carrier["traceparent"]);
  return parent ? trace.setSpanContext(base, parent) : extracted;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** A W3C `traceparent` (version 00) as a remote span context; undefined when malformed or all-zero. */
export function parseTraceparent(value: string | undefined): SpanContext | undefined {
  const match = value === undefined ? null : TRACEPARENT.exec(value.trim());
  if (!match) return undefined;
  const [, traceId = "", spanId = "", flags = "00"] = match;
  const span: SpanContext = { traceId, spanId, traceFlags: Number.parseInt(flags, 16) & TraceFlags.SAMPLED, isRemote: true };
  return trace.isSpanContextValid(span) ? span : undefined;
}

/** The span context a carrier names, or undefined when it names none (no propagator, malformed). */
export function spanContextFrom(carrier: TraceCarrier | undefined): SpanContext | undefined {
  if (!carrier) return undefined;
  const span = trace.getSpanContext(contextFrom(carrier));
  return span && trace.isSpanContextValid(span) ? span : undefined;
}

/** The active context written as a carrier, or undefined when no valid span is active. */
export function currentCarrier(active: Context = context.active()): TraceCarrier | undefined {
  const span = trace.getSpanContext(active);
  if (!span || !trace.isSpanContextValid(span)) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(active, carrier);
  // No propagator registered (a process without the SDK given a parent, `call --traceparent`): W3C Trace Context.
  carrier["traceparent"] ??= `00-${span.traceId}-${span.spanId}-0${span.traceFlags & TraceFlags.SAMPLED}`;
  return carrier;
}
