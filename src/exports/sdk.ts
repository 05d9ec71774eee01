/**
 * `mcp-tasks/sdk`: durable tasks for an existing `@modelcontextprotocol/sdk` McpServer — its
 * marked tools become task-capable, everything else stays as the SDK serves it.
 */
export { withTasks, createSdkTasks, SdkTasks } from "../mcp/sdk-server/sdk-tasks.js";
export type { SdkTasksOptions } from "../mcp/sdk-server/sdk-tasks-options.js";
export type { SdkToolTasks } from "../mcp/sdk-server/sdk-tool.js";
