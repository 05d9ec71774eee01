import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ProtocolRevision } from "../client/requestor-era.js";

/**
 * T-TOOL-2: a tool without `execution.taskSupport` is "forbidden". Under 2026-07-28 `tools/list`
 * says nothing of it (X-LEG-6): the server decides per call (X-CAP-4).
 */
export function taskSupportOf(tool: Tool, protocol: ProtocolRevision = "2025-11-25"): string {
  if (protocol === "2026-07-28") return tool.execution?.taskSupport ?? "server decides";
  return tool.execution?.taskSupport ?? "forbidden";
}

/** What a tool does, on one line: its title, else the first line of its description. */
export function summaryOf(tool: Tool): string {
  const title = tool.title ?? tool.annotations?.title;
  if (title) return title;
  return (tool.description ?? "").split("\n", 1)[0]?.trim() ?? "";
}
