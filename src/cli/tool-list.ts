import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { TaskClient } from "../client/task-client.js";
import { PAUSED_META_KEY } from "../mcp/handlers/tools-list.js";

/**
 * A tool's task support as the table shows it: what the server lists (T-TOOL-2: absent is
 * "forbidden" under 2025-11-25); "server decides" where the era lets the server decide per call
 * (X-CAP-4) and the server does not say how.
 */
export async function taskSupportShown(tasks: TaskClient, tool: Tool): Promise<string> {
  const listed = await tasks.taskSupportOf(tool.name).catch(() => null);
  if (listed !== null) return listed;
  return tasks.features.serverDecidesTasks ? "server decides" : "forbidden";
}

/** What a tool does, on one line: its title, else the first line of its description. */
export function summaryOf(tool: Tool): string {
  const title = tool.title ?? tool.annotations?.title;
  if (title) return title;
  return (tool.description ?? "").split("\n", 1)[0]?.trim() ?? "";
}

/** "paused" for a tool the server lists as paused (its calls are queued until it is resumed), else "". */
export function pausedShown(tool: Tool): string {
  return tool._meta?.[PAUSED_META_KEY] === true ? "paused" : "";
}
