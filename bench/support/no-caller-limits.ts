/**
 * `mcp-tasks serve` flags that lift the per-caller limits for a measurement: one load client
 * sending thousands of requests a second would otherwise trip each of them, and a refusal is not
 * the cost being measured.
 */
export const NO_CALLER_LIMITS = [
  "--rate-limit",
  "off",
  "--failed-lookups",
  "off",
  "--max-active-tasks",
  "1000000",
  "--max-stored-tasks",
  "100000000",
  "--max-sessions-per-client",
  "100000",
];
