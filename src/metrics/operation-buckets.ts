/**
 * The bucket boundaries (seconds) the OpenTelemetry MCP semantic conventions advise for
 * `mcp.server.operation.duration` and `mcp.client.operation.duration`; the Prometheus histogram
 * uses the same ones, so both views of the metric agree.
 */
export const OPERATION_DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/** The bucket boundaries (seconds) of a task's duration, from creation to its terminal status, in both views. */
export const TASK_DURATION_BUCKETS = [0.05, 0.1, 0.5, 1, 5, 15, 30, 60, 300, 900, 1800, 3600, 21600, 86400];
