/**
 * Whether the standard OpenTelemetry environment asks this process to export anything: an
 * exporter named (other than "none") or an OTLP endpoint given, and the SDK not disabled. Read
 * before anything of the SDK is loaded, so a process without it starts as fast as ever.
 */
export function telemetryRequested(env: NodeJS.ProcessEnv): boolean {
  if (env["OTEL_SDK_DISABLED"]?.trim().toLowerCase() === "true") return false;
  const named = (name: string): boolean => {
    const value = env[name]?.trim();
    return value !== undefined && value !== "" && value.split(",").some((exporter) => exporter.trim() !== "none");
  };
  if (env["OTEL_TRACES_EXPORTER"]?.trim() === "none" && !named("OTEL_METRICS_EXPORTER")) return false;
  return (
    named("OTEL_TRACES_EXPORTER") ||
    named("OTEL_METRICS_EXPORTER") ||
    Boolean(env["OTEL_EXPORTER_OTLP_ENDPOINT"]?.trim()) ||
    Boolean(env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]?.trim())
  );
}

/** The commands that set up the SDK when asked: they serve, run or send MCP requests. */
export const TRACED_COMMANDS: ReadonlySet<string> = new Set(["serve", "worker", "gateway", "call", "tasks", "tools"]);
