import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { SESSION_ERA } from "../eras.js";
import { usesFallback } from "../fallback/fallback-client.js";
import { isTaskTool, taskToolsBeside, type TaskToolName } from "../fallback/task-tools.js";
import type { TaskServerConfig } from "../task-server-config.js";
import type { RegisteredTool } from "../tool-definition.js";
import { registeredToolsOf } from "./sdk-internals.js";

/**
 * Whether the client of `mcpServer` gets the fallback for hosts without tasks
 * (docs/hosts/README.md), as a TaskServer session decides it: the client did not declare that it
 * follows tasks (the session era's `clientFollowsTasks`).
 */
export function servesFallback(mcpServer: McpServer, config: Pick<TaskServerConfig, "tasks" | "backgroundAfterMs">): boolean {
  return usesFallback(config, SESSION_ERA.wire.clientFollowsTasks(mcpServer.server.getClientCapabilities()));
}

/**
 * Our `task_*` tools as a fallback client sees them beside the McpServer's own: any tool the SDK
 * has of the same name wins (it stays listed and called; ours is not offered), marked or not.
 */
export function fallbackTaskTools(mcpServer: McpServer, tools: ReadonlyMap<string, RegisteredTool>): Tool[] {
  const sdkTools = registeredToolsOf(mcpServer);
  return taskToolsBeside(tools)
    .filter((tool) => !Object.hasOwn(sdkTools, tool.name))
    .map((tool) => SESSION_ERA.wire.listedWithTaskSupport(tool, "forbidden"));
}

/** Whether a call of `name` is one of our `task_*` tools on this McpServer (none of its own has that name). */
export function isFallbackTaskTool(name: unknown, mcpServer: McpServer, tools: ReadonlyMap<string, RegisteredTool>): name is TaskToolName {
  return isTaskTool(name, tools) && !Object.hasOwn(registeredToolsOf(mcpServer), name);
}
