import { trace, type Tracer } from "@opentelemetry/api";

/** The instrumentation scope of every span this package makes. */
export const INSTRUMENTATION_NAME = "mcp-tasks";

/**
 * The tracer of the globally registered provider, looked up on each use: an application that
 * registers its SDK after creating its server still gets our spans (until then the API's no-op
 * tracer makes them for free).
 */
export function tracer(): Tracer {
  return trace.getTracer(INSTRUMENTATION_NAME);
}
