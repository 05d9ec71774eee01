/**
 * The bucket boundaries (seconds) the OpenTelemetry MCP semantic conventions advise for
 * `mcp.server.operation.duration` and `mcp.client.operation.duration`; the Prometheus histogram
 * uses the same ones, so both views of the metric agree.
 */
export const OPERATION_DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/** The bucket boundaries (seconds) of a task's duration, from creation to its terminal status, in both views. */
export const TASK_DURATION_BUCKETS = [0.05, 0.1, 0.5, 1, 5, 15, 30, 60, 300, 900, 1800, 3600, 21600, 86400];

/** The bucket boundaries (seconds) of a waiting `tasks/result`'s wake-up, in both views. */
export const RESULT_WAKEUP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The bucket boundaries (seconds) of one task store operation, in both views. */
export const STORE_OPERATION_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
