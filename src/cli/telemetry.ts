/**
 * The OpenTelemetry Node SDK for the CLI's processes, configured by the standard environment
 * (`OTEL_TRACES_EXPORTER`, `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_PROTOCOL`,
 * `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_*`, …). Loaded with a dynamic import
 * only when {@link telemetryRequested} says so: the library itself speaks only the API.
 */
interface Started {
  shutdown(): Promise<void>;
}

let started: Started | null = null;

/**
 * Starts the SDK for `command` (its default service name is `mcp-tasks-<command>`). Metrics and
 * logs are exported only when their exporter is named: a collector set up for traces alone is
 * not sent what it did not ask for.
 */
export async function startTelemetry(command: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  if (started) return;
  env["OTEL_METRICS_EXPORTER"] ??= "none";
  env["OTEL_LOGS_EXPORTER"] ??= "none";
  const { NodeSDK } = await import("@opentelemetry/sdk-node");
  const named = env["OTEL_SERVICE_NAME"] !== undefined || /(^|,)\s*service\.name\s*=/.test(env["OTEL_RESOURCE_ATTRIBUTES"] ?? "");
  const sdk = new NodeSDK({ instrumentations: [], ...(!named && { serviceName: `mcp-tasks-${command}` }) });
  sdk.start();
  started = sdk;
}

/**
 * Exports what is still buffered and stops the SDK; nothing when it was never started. False when
 * the collector did not take it within {@link SHUTDOWN_MS}: the exporter may still hold a request
 * open, and only the caller can decide to exit past it.
 */
export async function shutdownTelemetry(): Promise<boolean> {
  const sdk = started;
  started = null;
  if (!sdk) return true;
  // A collector that is gone must not hold the exit: what cannot be sent in time is dropped.
  return Promise.race([
    sdk.shutdown().then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), SHUTDOWN_MS).unref()),
  ]);
}

/** How long a requestor's exit waits for its spans to reach the collector. */
const SHUTDOWN_MS = 5000;
