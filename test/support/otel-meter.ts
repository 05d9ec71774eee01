/**
 * The OpenTelemetry metrics SDK registered as this process's global meter provider, read on
 * demand: a real MeterProvider with a pull reader, so a test sees exactly what an exporter would
 * be handed at a collection.
 */
import { metrics } from "@opentelemetry/api";
import { metrics as sdk } from "@opentelemetry/sdk-node";

/** One data point as collected: a sum's or gauge's value, or a histogram's count and sum. */
export interface MeterPoint {
  name: string;
  unit: string;
  attributes: Record<string, unknown>;
  value?: number;
  count?: number;
  sum?: number;
}

/** Collects when asked (what a periodic reader does on its timer). */
class PullReader extends sdk.MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

export interface InstalledMeter {
  /** Runs a collection (observable callbacks included) and flattens its data points. */
  collect(): Promise<MeterPoint[]>;
  /** Unregisters the provider (the API falls back to its no-op) and shuts it down. */
  uninstall(): Promise<void>;
}

export function installMeter(): InstalledMeter {
  const reader = new PullReader();
  const provider = new sdk.MeterProvider({ readers: [reader] });
  metrics.disable();
  metrics.setGlobalMeterProvider(provider);
  return {
    async collect() {
      const { resourceMetrics, errors } = await reader.collect();
      if (errors.length > 0) throw new AggregateError(errors, "metric collection failed");
      return resourceMetrics.scopeMetrics.flatMap((scope) =>
        scope.metrics.flatMap((metric) =>
          (metric.dataPoints as Array<{ attributes: Record<string, unknown>; value: number | { count: number; sum?: number } }>).map(
            (point) => ({
              name: metric.descriptor.name,
              unit: metric.descriptor.unit,
              attributes: point.attributes,
              ...(typeof point.value === "number"
                ? { value: point.value }
                : { count: point.value.count, ...(point.value.sum !== undefined && { sum: point.value.sum }) }),
            }),
          ),
        ),
      );
    },
    async uninstall() {
      metrics.disable();
      await provider.shutdown();
    },
  };
}

/** The points of `name` whose attributes include `attributes`. */
export function pointsOf(points: MeterPoint[], name: string, attributes: Record<string, unknown> = {}): MeterPoint[] {
  return points.filter(
    (point) => point.name === name && Object.entries(attributes).every(([key, value]) => point.attributes[key] === value),
  );
}
