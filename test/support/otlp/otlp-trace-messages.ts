/**
 * Decoding of OTLP/HTTP trace exports, in both encodings the exporters send: binary protobuf
 * (`application/x-protobuf`), walked with the field numbers of the OTLP definitions
 * (opentelemetry/proto/collector/trace/v1 ExportTraceServiceRequest and trace/v1, common/v1,
 * resource/v1), and OTLP/JSON (`application/json`: ids as hex strings, enums as numbers, int64 as
 * strings or numbers).
 */
import { asDouble, asFixed64, asHex, asInt64, asString, wireFields } from "./protobuf-wire.js";
import type { AttributeValue, ReceivedEvent, ReceivedLink, ReceivedSpan } from "./received.js";

function messages(buffer: Uint8Array | undefined, number: number): Uint8Array[] {
  const found: Uint8Array[] = [];
  for (const field of wireFields(buffer ?? new Uint8Array())) if (field.number === number && field.bytes) found.push(field.bytes);
  return found;
}

/** AnyValue: 1 string, 2 bool, 3 int64, 4 double, 5 ArrayValue (1 values), 6 KeyValueList, 7 bytes. */
function anyValue(buffer: Uint8Array): AttributeValue {
  for (const field of wireFields(buffer)) {
    if (field.number === 1) return asString(field);
    if (field.number === 2) return field.varint !== 0n;
    if (field.number === 3) return Number(asInt64(field));
    if (field.number === 4) return asDouble(field);
    if (field.number === 5) return messages(field.bytes, 1).map(anyValue);
    if (field.number === 7) return asHex(field);
  }
  return null;
}

/** repeated KeyValue (1 key, 2 value) at `number`. */
function keyValues(buffer: Uint8Array, number: number): Record<string, AttributeValue> {
  const attributes: Record<string, AttributeValue> = {};
  for (const pair of messages(buffer, number)) {
    let key = "";
    let value: AttributeValue = null;
    for (const field of wireFields(pair)) {
      if (field.number === 1) key = asString(field);
      if (field.number === 2 && field.bytes) value = anyValue(field.bytes);
    }
    attributes[key] = value;
  }
  return attributes;
}

/** Span: 1 trace_id, 2 span_id, 4 parent_span_id, 5 name, 6 kind, 7/8 start/end (fixed64), 9 attributes, 11 events, 13 links, 15 status. */
function protobufSpan(buffer: Uint8Array, resource: Record<string, AttributeValue>, scope: string): ReceivedSpan {
  const span: ReceivedSpan = {
    traceId: "",
    spanId: "",
    parentSpanId: "",
    name: "",
    kind: 0,
    attributes: keyValues(buffer, 9),
    events: [],
    links: [],
    statusCode: 0,
    startTimeUnixNano: 0n,
    endTimeUnixNano: 0n,
    resource,
    scope,
    encoding: "protobuf",
  };
  for (const field of wireFields(buffer)) {
    if (field.number === 1) span.traceId = asHex(field);
    else if (field.number === 2) span.spanId = asHex(field);
    else if (field.number === 4) span.parentSpanId = asHex(field);
    else if (field.number === 5) span.name = asString(field);
    else if (field.number === 6) span.kind = Number(field.varint);
    else if (field.number === 7) span.startTimeUnixNano = asFixed64(field);
    else if (field.number === 8) span.endTimeUnixNano = asFixed64(field);
    else if (field.number === 11 && field.bytes) span.events.push(protobufEvent(field.bytes));
    else if (field.number === 13 && field.bytes) span.links.push(protobufLink(field.bytes));
    else if (field.number === 15 && field.bytes) {
      // Status: 2 message, 3 code.
      for (const status of wireFields(field.bytes)) if (status.number === 3) span.statusCode = Number(status.varint);
    }
  }
  return span;
}

/** Span.Event: 1 time, 2 name, 3 attributes. */
function protobufEvent(buffer: Uint8Array): ReceivedEvent {
  let name = "";
  let timeUnixNano = 0n;
  for (const field of wireFields(buffer)) {
    if (field.number === 1) timeUnixNano = asFixed64(field);
    else if (field.number === 2) name = asString(field);
  }
  return { name, timeUnixNano, attributes: keyValues(buffer, 3) };
}

/** Span.Link: 1 trace_id, 2 span_id, 4 attributes. */
function protobufLink(buffer: Uint8Array): ReceivedLink {
  const link: ReceivedLink = { traceId: "", spanId: "", attributes: keyValues(buffer, 4) };
  for (const field of wireFields(buffer)) {
    if (field.number === 1) link.traceId = asHex(field);
    if (field.number === 2) link.spanId = asHex(field);
  }
  return link;
}

/** ExportTraceServiceRequest: 1 resource_spans; ResourceSpans: 1 resource (1 attributes), 2 scope_spans; ScopeSpans: 1 scope (1 name), 2 spans. */
export function decodeProtobufTraces(body: Uint8Array): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of messages(body, 1)) {
    const resource = messages(resourceSpans, 1).map((r) => keyValues(r, 1))[0] ?? {};
    for (const scopeSpans of messages(resourceSpans, 2)) {
      let scope = "";
      for (const s of messages(scopeSpans, 1)) for (const field of wireFields(s)) if (field.number === 1) scope = asString(field);
      for (const span of messages(scopeSpans, 2)) spans.push(protobufSpan(span, resource, scope));
    }
  }
  return spans;
}

type JsonAnyValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonAnyValue[] };
};
export type JsonKeyValue = { key: string; value?: JsonAnyValue };

function jsonValue(value: JsonAnyValue | undefined): AttributeValue {
  if (!value) return null;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(jsonValue);
  return null;
}

export function jsonAttributes(list: JsonKeyValue[] | undefined): Record<string, AttributeValue> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, jsonValue(value)]));
}

interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  startTimeUnixNano?: string | number;
  endTimeUnixNano?: string | number;
  attributes?: JsonKeyValue[];
  events?: Array<{ name: string; timeUnixNano?: string | number; attributes?: JsonKeyValue[] }>;
  links?: Array<{ traceId: string; spanId: string; attributes?: JsonKeyValue[] }>;
  status?: { code?: number };
}

interface JsonExport {
  resourceSpans?: Array<{
    resource?: { attributes?: JsonKeyValue[] };
    scopeSpans?: Array<{ scope?: { name?: string }; spans?: JsonSpan[] }>;
  }>;
}

export function decodeJsonTraces(body: string): ReceivedSpan[] {
  const parsed = JSON.parse(body) as JsonExport;
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of parsed.resourceSpans ?? []) {
    const resource = jsonAttributes(resourceSpans.resource?.attributes);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        spans.push({
          traceId: span.traceId.toLowerCase(),
          spanId: span.spanId.toLowerCase(),
          parentSpanId: (span.parentSpanId ?? "").toLowerCase(),
          name: span.name,
          kind: span.kind ?? 0,
          attributes: jsonAttributes(span.attributes),
          events: (span.events ?? []).map((event) => ({
            name: event.name,
            timeUnixNano: BigInt(event.timeUnixNano ?? 0),
            attributes: jsonAttributes(event.attributes),
          })),
          links: (span.links ?? []).map((link) => ({
            traceId: link.traceId.toLowerCase(),
            spanId: link.spanId.toLowerCase(),
            attributes: jsonAttributes(link.attributes),
          })),
          statusCode: span.status?.code ?? 0,
          startTimeUnixNano: BigInt(span.startTimeUnixNano ?? 0),
          endTimeUnixNano: BigInt(span.endTimeUnixNano ?? 0),
          resource,
          scope: scopeSpans.scope?.name ?? "",
          encoding: "json",
        });
      }
    }
  }
  return spans;
}
