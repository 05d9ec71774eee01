/**
 * The OpenTelemetry Node SDK for the CLI's processes, configured by the standard environment
 * (`OTEL_TRACES_EXPORTER`, `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_PROTOCOL`,
 * `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_*`, …). Loaded with a dynamic import
 * only when {@link telemetryRequested} says so: the library itself speaks only the API.
 */
import { installHint } from "./optional-package.js";
import { exportFailureReport } from "./telemetry-failure.js";

interface Started {
  shutdown(): Promise<void>;
}

let started: Started | null = null;
let failures: ReturnType<typeof exportFailureReport> | null = null;

/** The commands that keep running (and export all along); the others are one-shot requestors. */
const SERVING: ReadonlySet<string> = new Set(["serve", "worker", "gateway"]);

/** How long a server's exit waits for its spans to reach the collector. */
export const SERVER_SHUTDOWN_MS = 5000;
/**
 * How long a one-shot command (`call`, `tasks`, `tools`) waits for its spans at exit: a collector
 * that is down or hangs costs every command this long, so it is short; a reachable one takes a
 * command's few spans well within it.
 */
export const ONE_SHOT_SHUTDOWN_MS = 1000;

/**
 * Starts the SDK for `command` (its default service name is `mcp-tasks-<command>`). Metrics and
 * logs are exported only when their exporter is named: a collector set up for traces alone is
 * not sent what it did not ask for. Failed exports are told once ({@link exportFailureReport}):
 * a server logs one warning line when the first one fails, a one-shot command one line on stderr
 * as it exits.
 */
export async function startTelemetry(command: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  if (started) return;
  env["OTEL_METRICS_EXPORTER"] ??= "none";
  env["OTEL_LOGS_EXPORTER"] ??= "none";
  // The SDK is an optional peer dependency (a library install does not carry its exporters): an
  // environment that asks for tracing without it installed is told how to get it.
  const { NodeSDK, core } = await import("@opentelemetry/sdk-node").catch((error: unknown) => {
    if ((error as { code?: unknown }).code !== "ERR_MODULE_NOT_FOUND") throw error;
    throw new Error(`OTEL_* asks for tracing, which needs @opentelemetry/sdk-node: ${installHint("@opentelemetry/sdk-node")}`, {
      cause: error,
    });
  });
  failures = exportFailureReport(SERVING.has(command) ? "at-once" : "at-exit", env);
  const report = failures;
  // The SDK hands every failed export (and its other errors) to the global error handler, whose
  // default says nothing unless OTEL_LOG_LEVEL sets up a diagnostic logger: it still does.
  const diagnostics = core.loggingErrorHandler();
  core.setGlobalErrorHandler((error) => {
    report.failed(error);
    diagnostics(error);
  });
  const named = env["OTEL_SERVICE_NAME"] !== undefined || /(^|,)\s*service\.name\s*=/.test(env["OTEL_RESOURCE_ATTRIBUTES"] ?? "");
  const sdk = new NodeSDK({ instrumentations: [], ...(!named && { serviceName: `mcp-tasks-${command}` }) });
  sdk.start();
  started = sdk;
}

/**
 * Exports what is still buffered and stops the SDK; nothing when it was never started. False when
 * the collector did not take it within `timeoutMs`: the exporter may still hold a request open,
 * and only the caller can decide to exit past it. What could not be exported is told once.
 */
export async function shutdownTelemetry(timeoutMs = SERVER_SHUTDOWN_MS): Promise<boolean> {
  const sdk = started;
  const report = failures;
  started = null;
  if (!sdk) return true;
  // A collector that is gone must not hold the exit: what cannot be sent in time is dropped.
  const done = await Promise.race([
    sdk.shutdown().then(
      () => true,
      (error: unknown) => {
        report?.failed(error);
        return true;
      },
    ),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref()),
  ]);
  if (!done) report?.failed(new Error(`the collector did not take the spans within ${timeoutMs} ms`));
  report?.exiting();
  return done;
}
