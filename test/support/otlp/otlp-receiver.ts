import { createServer, type Server } from "node:http";
import { Recorder } from "../recorder.js";
import { decodeJsonMetrics } from "./otlp-metric-messages.js";
import { decodeJsonTraces, decodeProtobufTraces } from "./otlp-trace-messages.js";
import type { ReceivedMetricPoint, ReceivedSpan } from "./received.js";

/**
 * An OTLP/HTTP collector for tests: it accepts what the real exporters send to `/v1/traces`
 * (protobuf or JSON, per OTEL_EXPORTER_OTLP_PROTOCOL), decodes every span, and answers as a
 * collector does. `/v1/metrics` sent as JSON (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) is decoded
 * into data points too; as protobuf it is, like `/v1/logs`, accepted and counted. Tests wait on
 * spans and data points.
 */
export class OtlpReceiver {
  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly spans: Recorder<ReceivedSpan>,
    /** Every data point of every JSON metric export, in arrival order (cumulative: later exports repeat the totals). */
    readonly metricPoints: Recorder<ReceivedMetricPoint>,
    /** Every export request: path and content type. */
    readonly requests: Array<{ path: string; contentType: string }>,
    /** Bodies that failed to decode (a test asserts there are none). */
    readonly failures: string[],
  ) {}

  static async start(): Promise<OtlpReceiver> {
    const spans = new Recorder<ReceivedSpan>();
    const metricPoints = new Recorder<ReceivedMetricPoint>();
    const requests: OtlpReceiver["requests"] = [];
    const failures: string[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const body = Buffer.concat(chunks);
        const contentType = (req.headers["content-type"] ?? "").split(";")[0]?.trim() ?? "";
        const path = req.url ?? "";
        requests.push({ path, contentType });
        try {
          if (path === "/v1/traces") {
            const decoded = contentType === "application/json" ? decodeJsonTraces(body.toString("utf8")) : decodeProtobufTraces(body);
            for (const span of decoded) spans.push(span);
          } else if (path === "/v1/metrics" && contentType === "application/json") {
            for (const point of decodeJsonMetrics(body.toString("utf8"))) metricPoints.push(point);
          }
        } catch (error) {
          failures.push(`${contentType}: ${error instanceof Error ? error.message : String(error)}`);
          res.writeHead(400).end();
          return;
        }
        // An empty ExportTraceServiceResponse: no partial success to report.
        if (contentType === "application/json") res.writeHead(200, { "content-type": "application/json" }).end("{}");
        else res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    return new OtlpReceiver(server, `http://127.0.0.1:${port}`, spans, metricPoints, requests, failures);
  }

  /** The environment that points a process's SDK here, exporting every span within ~100 ms. */
  env(protocol: "http/protobuf" | "http/json", serviceName: string): Record<string, string> {
    return {
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_ENDPOINT: this.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
      OTEL_SERVICE_NAME: serviceName,
      OTEL_BSP_SCHEDULE_DELAY: "100",
    };
  }

  /** Waits for a span matching `match`. */
  span(match: (span: ReceivedSpan) => boolean, what: string, timeoutMs = 15_000): Promise<ReceivedSpan> {
    return this.spans.waitFor(match, what, timeoutMs);
  }

  /** Waits for a metric data point matching `match` (JSON metric exports only). */
  metricPoint(match: (point: ReceivedMetricPoint) => boolean, what: string, timeoutMs = 15_000): Promise<ReceivedMetricPoint> {
    return this.metricPoints.waitFor(match, what, timeoutMs);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
