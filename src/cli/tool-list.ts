import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

/** Every page of the server's `tools/list`. */
export async function listAllTools(client: Client): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

/** T-TOOL-2: a tool without `execution.taskSupport` is "forbidden". */
export function taskSupportOf(tool: Tool): string {
  return tool.execution?.taskSupport ?? "forbidden";
}

/** What a tool does, on one line: its title, else the first line of its description. */
export function summaryOf(tool: Tool): string {
  const title = tool.title ?? tool.annotations?.title;
  if (title) return title;
  return (tool.description ?? "").split("\n", 1)[0]?.trim() ?? "";
}
