import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { SessionContext } from "../era.js";
import type { RegisteredTool } from "../tool-definition.js";
import { usesFallback } from "../fallback/fallback-client.js";
import { taskToolsBeside } from "../fallback/task-tools.js";

/** `tools/list`, with each tool's task support as the session era lists it when tasks are on (T-TOOL). */
export function toolsList(session: SessionContext): { tools: Tool[] } {
  const tools: Tool[] = [];
  const { era } = session;
  const fallback = usesFallback(session.config, era.wire.clientFollowsTasks(session.server.getClientCapabilities()));
  for (const tool of session.tools.values()) {
    // Listed as it is, also to a fallback client: a requestor need not declare that it follows
    // tasks (the SDK's own does not) and reads "required" to send the call as a task.
    const described = withPause(describeTool(tool), session.engine.isPaused(tool.name));
    tools.push(session.config.tasks ? era.wire.listedWithTaskSupport(described, tool.definition.taskSupport ?? "forbidden") : described);
  }
  // docs/hosts/README.md: the task operations as tools, for clients that cannot call them as methods.
  if (fallback) {
    tools.push(...taskToolsBeside(session.tools).map((tool) => era.wire.listedWithTaskSupport(tool, "forbidden")));
  }
  return { tools };
}

/**
 * The `_meta` key that marks a paused tool in `tools/list` (`true`): its calls are accepted and
 * queued, and start once an operator resumes it (docs/web-view.md, Queue control).
 */
export const PAUSED_META_KEY = "dev.mcp-tasks/paused";

/** The tool as listed, marked paused when it is. */
export function withPause(tool: Tool, paused: boolean): Tool {
  return paused ? { ...tool, _meta: { ...tool._meta, [PAUSED_META_KEY]: true } } : tool;
}

/**
 * A tool as every era lists it: name, title, description, its arguments (and its structured
 * output, when it declares one) as JSON Schema, its annotations, icons and `_meta`. The schemas
 * keep their `$schema` (2020-12, the dialect zod writes and the one MCP 2025-11-25 assumes by
 * default, SEP-1613): a client told which dialect it reads needs no guess.
 */
export function describeTool(tool: RegisteredTool): Tool {
  const { definition } = tool;
  return {
    name: tool.name,
    ...(definition.title !== undefined && { title: definition.title }),
    ...(definition.description !== undefined && { description: definition.description }),
    inputSchema: definition.listedSchemas?.input ?? (z.toJSONSchema(definition.input, { io: "input" }) as Tool["inputSchema"]),
    ...(definition.listedSchemas?.output !== undefined
      ? { outputSchema: definition.listedSchemas.output }
      : definition.outputSchema !== undefined && {
          outputSchema: z.toJSONSchema(definition.outputSchema, { io: "output" }) as Tool["outputSchema"],
        }),
    ...(definition.annotations !== undefined && { annotations: definition.annotations }),
    ...(definition.icons !== undefined && { icons: definition.icons }),
    ...(definition._meta !== undefined && { _meta: definition._meta }),
  };
}
