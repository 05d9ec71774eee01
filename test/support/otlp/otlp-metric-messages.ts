/**
 * Decoding of OTLP/HTTP metric exports sent as OTLP/JSON (`application/json`, from
 * OTEL_EXPORTER_OTLP_PROTOCOL=http/json): every data point of sums, gauges and histograms with
 * its metric's name and its attributes. int64 values come as strings or numbers.
 */
import { jsonAttributes, type JsonKeyValue } from "./otlp-trace-messages.js";
import type { ReceivedMetricPoint } from "./received.js";

type JsonNumber = string | number;

interface JsonPoint {
  attributes?: JsonKeyValue[];
  asInt?: JsonNumber;
  asDouble?: number;
  count?: JsonNumber;
  sum?: number;
}

interface JsonMetric {
  name: string;
  unit?: string;
  sum?: { dataPoints?: JsonPoint[] };
  gauge?: { dataPoints?: JsonPoint[] };
  histogram?: { dataPoints?: JsonPoint[] };
}

interface JsonExport {
  resourceMetrics?: Array<{
    resource?: { attributes?: JsonKeyValue[] };
    scopeMetrics?: Array<{ scope?: { name?: string }; metrics?: JsonMetric[] }>;
  }>;
}

export function decodeJsonMetrics(body: string): ReceivedMetricPoint[] {
  const parsed = JSON.parse(body) as JsonExport;
  const points: ReceivedMetricPoint[] = [];
  for (const resourceMetrics of parsed.resourceMetrics ?? []) {
    const resource = jsonAttributes(resourceMetrics.resource?.attributes);
    for (const scopeMetrics of resourceMetrics.scopeMetrics ?? []) {
      const scope = scopeMetrics.scope?.name ?? "";
      for (const metric of scopeMetrics.metrics ?? []) {
        const base = { name: metric.name, unit: metric.unit ?? "", resource, scope };
        for (const point of metric.sum?.dataPoints ?? [])
          points.push({ ...base, kind: "sum", attributes: jsonAttributes(point.attributes), value: valueOf(point) });
        for (const point of metric.gauge?.dataPoints ?? [])
          points.push({ ...base, kind: "gauge", attributes: jsonAttributes(point.attributes), value: valueOf(point) });
        for (const point of metric.histogram?.dataPoints ?? []) {
          points.push({
            ...base,
            kind: "histogram",
            attributes: jsonAttributes(point.attributes),
            count: Number(point.count ?? 0),
            sum: point.sum ?? 0,
          });
        }
      }
    }
  }
  return points;
}

function valueOf(point: JsonPoint): number {
  if (point.asInt !== undefined) return Number(point.asInt);
  return point.asDouble ?? 0;
}
